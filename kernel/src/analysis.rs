//! One analysis of one kernel: static (counts as formulas in the loops' trip counts, or
//! numbers given `--trip`) or by emulating a launch. The report's `parameters` are the
//! Volkov/Gajger model's inputs (seed 004, eqs. 4.1–4.6, section 5.2).

use crate::arch::Arch;
use crate::cfg::{Cfg, Loop};
use crate::counts::{block_frequencies, static_counts};
use crate::emulate::{emulate, traffic, Emulation, Launch, Traffic, Unresolved, WarpTraffic};
use crate::error::{Error, Result};
use crate::latency::{static_latency_bound, LatencyTable};
use crate::poly::Poly;
use crate::sass::{Kernel, Listing, Register};
use serde::Serialize;
use std::collections::BTreeMap;

/// What to analyse and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Substring of the mangled or demangled name.
    pub kernel: Option<String>,
    /// Overrides the listing's architecture.
    pub arch: Option<Arch>,
    /// Trip counts by loop id (`L0` → 8): static mode.
    pub trips: BTreeMap<String, f64>,
    /// A launch to emulate: emulation mode.
    pub launch: Option<Launch>,
    /// Replaces the two calibrated figures of the architecture's latency table: a
    /// calibration weighing trial figures (hetsim_lab's latency fit).
    pub calibrated: Option<CalibratedLatencies>,
}

/// The two figures of a latency table that are calibrated rather than measured [cycles].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibratedLatencies {
    pub branch_taken: f64,
    pub block_replacement: f64,
}

/// A number, or a formula in trip counts not yet given.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Quantity {
    Value(f64),
    Formula(String),
}

impl Quantity {
    pub fn value(&self) -> Option<f64> {
        match self {
            Quantity::Value(v) => Some(*v),
            Quantity::Formula(_) => None,
        }
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Quantity::Value(v) if v.fract() == 0.0 => write!(f, "{}", *v as i64),
            Quantity::Value(v) => write!(f, "{v:.3}"),
            Quantity::Formula(s) => write!(f, "{s}"),
        }
    }
}

/// Per-warp dynamic counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerWarp {
    pub issued: Quantity,
    pub executed: Quantity,
    pub cuda_core: Quantity,
    pub by_pipe: BTreeMap<&'static str, Quantity>,
}

/// The Volkov/Gajger model's kernel parameters, named as in the thesis: exactly the keys
/// `hetsim model volkov --params` and the `gpu-volkov` model take from a kernel, so that the
/// object plugs in as it is (the register count, which that model does not take, is beside it
/// in [`Report::registers`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[allow(non_snake_case)]
pub struct Parameters {
    pub CUDACoreInstructions: Quantity,
    pub issuedInstructions: Quantity,
    pub GMEMBytesTransferred: Quantity,
    pub latencyBound: Quantity,
}

/// Everything `hetsim kernel analyze` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub name: String,
    pub demangled: Option<String>,
    pub arch: Arch,
    /// `static` or `emulation`.
    pub mode: &'static str,
    /// The latency table used.
    pub latency_table: String,
    pub instructions: usize,
    pub loops: Vec<Loop>,
    pub per_warp: PerWarp,
    pub gmem_bytes_per_warp: Quantity,
    pub latency_bound: Quantity,
    pub unresolved: Vec<Unresolved>,
    pub parameters: Parameters,
    /// Registers per thread, estimated from the highest register the code names
    /// (`cuobjdump -res-usage` is exact).
    pub registers: Option<u32>,
    /// How the launch was emulated, in emulation mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
    /// A warp's traffic through L1, L2, DRAM and shared memory, and its barriers, in
    /// emulation mode (`crate::emulate::traffic`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<WarpTraffic>,
    /// The per-block traffic `memory` comes from, kept so that a TEG simulation of the same
    /// launch (`hetsim_teg::Options::traffic`) need not emulate the tiles again.
    #[serde(skip)]
    pub block_traffic: Option<Traffic>,
    /// Assumptions worth a user's attention.
    pub notes: Vec<String>,
}

/// The launch's coverage in emulation mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmulationSummary {
    pub warps: u64,
    pub groups: usize,
    pub emulated_warps: u64,
    pub coverage: String,
    pub thread_instructions_per_warp: f64,
    /// Every active lane's instructions, guard or not (Nsight Compute's
    /// `smsp__thread_inst_executed` over warps launched).
    pub active_thread_instructions_per_warp: f64,
    pub loop_runs_per_warp: BTreeMap<String, f64>,
}

/// Picks the kernel `options` names; lists the candidates when the choice is ambiguous.
pub fn select_kernel<'a>(listing: &'a Listing, name: Option<&str>, arch: Option<Arch>) -> Result<&'a Kernel> {
    let label = |k: &Kernel| {
        let name = k
            .demangled
            .as_deref()
            .unwrap_or(if k.name.is_empty() { "(unnamed)" } else { &k.name });
        match k.arch {
            Some(a) => format!("{name} [{a}]"),
            None => name.to_string(),
        }
    };
    let mut candidates: Vec<&Kernel> = listing
        .kernels
        .iter()
        .filter(|k| match name {
            // A listing without a header (the thesis's) is one kernel that any name names.
            Some(n) => {
                k.name.is_empty()
                    || k.name.contains(n)
                    || k.demangled.as_deref().is_some_and(|d| d.contains(n))
            }
            None => true,
        })
        .collect();
    if let Some(a) = arch {
        if candidates.iter().any(|k| k.arch == Some(a)) {
            candidates.retain(|k| k.arch == Some(a));
        }
    }
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::new(format!(
            "no kernel matches `{}`; the listing holds: {}",
            name.unwrap_or(""),
            listing.kernels.iter().map(label).collect::<Vec<_>>().join(", ")
        ))),
        many => {
            let exact: Vec<&&Kernel> = many
                .iter()
                .filter(|k| name.is_some_and(|n| k.name == n))
                .collect();
            if let [one] = exact.as_slice() {
                return Ok(one);
            }
            Err(Error::new(format!(
                "{} kernels match{}: choose one with --kernel (and --arch): {}",
                many.len(),
                name.map(|n| format!(" `{n}`")).unwrap_or_default(),
                many.iter().map(|k| label(k)).collect::<Vec<_>>().join(", ")
            )))
        }
    }
}

/// Registers per thread as ptxas would report them: the highest general register named,
/// plus one, plus the two that sm_70 and later reserve.
pub fn estimated_registers(kernel: &Kernel, arch: Arch) -> Option<u32> {
    let highest = kernel
        .instructions
        .iter()
        .flat_map(|i| crate::regs::writes(i).into_iter().chain(crate::regs::reads(i)))
        .filter_map(|r| match r {
            Register::General(n) => Some(u32::from(n)),
            _ => None,
        })
        .max()?;
    Some(highest + 1 + if arch.major >= 7 { 2 } else { 0 })
}

/// Analyses the kernel that `options` selects from `listing`.
pub fn analyze(listing: &Listing, options: &Options) -> Result<Report> {
    let kernel = select_kernel(listing, options.kernel.as_deref(), options.arch)?;
    let mut notes = Vec::new();
    let arch = match (options.arch, kernel.arch) {
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) if kernel.name.is_empty() => {
            notes.push(
                "no architecture in the listing: taken as sm_52, the thesis's GTX 970 (use --arch)"
                    .to_string(),
            );
            Arch::MAXWELL
        }
        (None, None) => {
            return Err(Error::new(
                "the listing names no architecture: give one with --arch (e.g. sm_90)",
            ))
        }
    };
    let cfg = Cfg::build(kernel)?;
    let mut table = LatencyTable::for_arch(arch)?;
    if let Some(figures) = options.calibrated {
        table.branch_taken = figures.branch_taken;
        table.block_replacement = figures.block_replacement;
    }
    if !table.majors.contains(&arch.major) {
        notes.push(format!(
            "no latency table for {arch}: using {}, standing in",
            table.name
        ));
    }
    let names: Vec<String> = cfg.loops.iter().map(|l| l.id.clone()).collect();
    for id in options.trips.keys() {
        if cfg.loop_index(id).is_none() {
            return Err(Error::new(format!(
                "--trip {id}: no such loop; the kernel's loops are: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    let registers = estimated_registers(kernel, arch);
    let mut report = match &options.launch {
        Some(launch) => {
            let e = emulate(kernel, &cfg, arch, &table, launch)?;
            let measured = traffic(kernel, &cfg, arch, &table, launch)?;
            let memory = measured.per_warp(e.gmem_bytes);
            let mut report = emulation_report(kernel, &cfg, arch, e, memory, registers);
            report.block_traffic = Some(measured);
            report
        }
        None => {
            let freq = block_frequencies(&cfg);
            let counts = static_counts(kernel, &cfg, &freq, arch);
            let trips: Vec<Option<f64>> = names.iter().map(|n| options.trips.get(n).copied()).collect();
            let q = |p: &Poly| match p.eval(&trips) {
                Some(v) => Quantity::Value(v),
                None => Quantity::Formula(p.display(&names).to_string()),
            };
            let latency = static_latency_bound(kernel, &cfg, &freq, arch, &table)?;
            if arch.has_dual_issue() && !kernel.instructions.iter().any(|i| i.dual_issue_with_next) {
                notes.push("no dual-issued pair marked in the listing: issued = executed".to_string());
            }
            notes.push("static mode: forward branches taken as not taken, global accesses as fully coalesced; emulate a launch (--grid, --block, --args) for exact counts".to_string());
            Report {
                name: kernel.name.clone(),
                demangled: kernel.demangled.clone(),
                arch,
                mode: "static",
                latency_table: String::new(),
                instructions: kernel.instructions.len(),
                loops: cfg.loops.clone(),
                per_warp: PerWarp {
                    issued: q(&counts.issued),
                    executed: q(&counts.executed),
                    cuda_core: q(&counts.cuda_core),
                    by_pipe: counts.by_pipe.iter().map(|(p, c)| (p.name(), q(c))).collect(),
                },
                gmem_bytes_per_warp: q(&counts.gmem_bytes),
                latency_bound: q(&latency),
                unresolved: Vec::new(),
                parameters: Parameters {
                    CUDACoreInstructions: q(&counts.cuda_core),
                    issuedInstructions: q(&counts.issued),
                    GMEMBytesTransferred: q(&counts.gmem_bytes),
                    latencyBound: q(&latency),
                },
                registers,
                emulation: None,
                memory: None,
                block_traffic: None,
                notes: Vec::new(),
            }
        }
    };
    report.latency_table = table.name.clone();
    report.notes.splice(0..0, notes);
    Ok(report)
}

fn emulation_report(
    kernel: &Kernel,
    cfg: &Cfg,
    arch: Arch,
    e: Emulation,
    memory: WarpTraffic,
    registers: Option<u32>,
) -> Report {
    let v = Quantity::Value;
    let mut notes = Vec::new();
    if e.unknown_address_accesses > 0.0 {
        notes.push(format!(
            "{:.2} global accesses per warp use addresses loaded from memory: counted as fully coalesced",
            e.unknown_address_accesses
        ));
    }
    if !e.unresolved.is_empty() {
        notes.push(format!(
            "{} branch(es) depend on loaded data: each taken as its `unresolved` entry says",
            e.unresolved.len()
        ));
    }
    if e.coverage.starts_with("sampled") {
        notes.push(format!("emulation {}", e.coverage));
    }
    let by_pipe = e.by_pipe.iter().map(|(p, c)| (p.name(), v(*c))).collect();
    Report {
        name: kernel.name.clone(),
        demangled: kernel.demangled.clone(),
        arch,
        mode: "emulation",
        latency_table: String::new(),
        instructions: kernel.instructions.len(),
        loops: cfg.loops.clone(),
        per_warp: PerWarp {
            issued: v(e.issued),
            executed: v(e.executed),
            cuda_core: v(e.cuda_core),
            by_pipe,
        },
        gmem_bytes_per_warp: v(e.gmem_bytes),
        latency_bound: v(e.latency_bound),
        unresolved: e.unresolved.clone(),
        parameters: Parameters {
            CUDACoreInstructions: v(e.cuda_core),
            issuedInstructions: v(e.issued),
            GMEMBytesTransferred: v(e.gmem_bytes),
            latencyBound: v(e.latency_bound),
        },
        registers,
        emulation: Some(EmulationSummary {
            warps: e.warps,
            groups: e.groups,
            emulated_warps: e.emulated_warps,
            coverage: e.coverage,
            thread_instructions_per_warp: e.thread_executed,
            active_thread_instructions_per_warp: e.active_thread_executed,
            loop_runs_per_warp: e.loop_runs,
        }),
        memory: Some(memory),
        block_traffic: None,
        notes,
    }
}

//! An architecture's issue-engine parameters, read from a data file (`teg/data/*.toml`).
//!
//! A latency the file omits (a pipe's execution latency, a memory level's) is the kernel
//! analyser's latency table's for the architecture (kernel/data/latency/*.toml), so that
//! measured latencies have one home: Hopper's file omits every latency the table holds.

use crate::error::{Error, Result};
use hetsim_kernel::arch::{Arch, Pipe};
use hetsim_kernel::latency::LatencyTable;
use hetsim_models::catalog::calibrated_value;
use hetsim_models::hierarchy::{architecture_value, keys};
use hetsim_models::queueing;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One pipe's timing, in cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipeTiming {
    /// Until the result can be read (execution latency); memory pipes take it from
    /// [`MemoryTiming`].
    pub latency: f64,
    /// The scheduler's unit of this pipe is busy this long per warp instruction: 32 / lanes
    /// per scheduler (seed 002's issue latency across warps).
    pub interval: f64,
    /// Between two instructions of one warp (seed 002's issue latency within a warp), where
    /// the listing carries no stall counts.
    pub same_warp: f64,
    /// One unit serves the whole SM (the load/store path behind the schedulers, sm_70+'s MIO
    /// and L1): `interval` then counts for the SM, not for each scheduler. With
    /// [`ArchParams::one_l1_data_path`], every such pipe shares that one unit.
    pub per_sm: bool,
}

/// A pipe as the file gives it: its latency may be left to the latency table.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePipe {
    latency: Option<f64>,
    interval: f64,
    same_warp: f64,
    #[serde(default)]
    per_sm: bool,
}

/// `[memory]` as the file gives it: the latencies may be left to the latency table.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMemory {
    global: Option<f64>,
    l2: Option<f64>,
    l1: f64,
    l2_bytes: f64,
    shared: Option<f64>,
    local: Option<f64>,
    constant: Option<f64>,
    efficiency: f64,
    queue_cycles: f64,
}

/// Memory latencies by level, in cycles, and the memory pipeline's concurrency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryTiming {
    pub global: f64,
    pub l2: f64,
    /// A load of a sector its block loaded before: an L1 hit.
    pub l1: f64,
    /// L2's capacity, bytes; 0 for a GPU without data caches (every sector goes to DRAM).
    pub l2_bytes: f64,
    pub shared: f64,
    pub local: f64,
    pub constant: f64,
    /// The fraction of the peak (eq. 4.7) bandwidth DRAM sustains; sets `C_mem`.
    pub efficiency: f64,
    /// DRAM's queueing delay scale, cycles: a request finding a fraction `ρ` of the slots
    /// held returns `queue_cycles · ρ/(1 − ρ)` late.
    pub queue_cycles: f64,
}

/// `[blocks]` as the file gives it: the barrier may be left to the architecture data file, the
/// launch rate and overhead to the calibrated GPU data file (models/data).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileBlocks {
    launch_rate: Option<f64>,
    replacement: f64,
    launch_overhead: Option<f64>,
    barrier: Option<f64>,
}

/// How blocks reach an SM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockTiming {
    /// Blocks per second the whole GPU starts.
    pub launch_rate: f64,
    /// Cycles from a block's end to its successor's first issue in the same slot.
    pub replacement: f64,
    /// Seconds a launch costs beyond its blocks (what CUDA events around an empty launch see).
    pub launch_overhead: f64,
    /// Cycles from the last warp's arrival at a block barrier (`BAR.SYNC`) to the release.
    pub barrier: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    source: String,
    majors: Vec<u8>,
    #[serde(default)]
    stands_in_for: Vec<u8>,
    schedulers: u32,
    taken_branch: f64,
    #[serde(default)]
    one_l1_data_path: bool,
    pipes: BTreeMap<String, FilePipe>,
    memory: FileMemory,
    blocks: FileBlocks,
}

/// The latency table's latency of the pipe `name`, where it has one.
fn table_latency(table: &LatencyTable, name: &str) -> Option<f64> {
    let i = &table.instruction;
    Some(match name {
        "fp32" => i.fp32,
        "fp16" => i.fp16,
        "int" => i.int,
        "fp64" => i.fp64,
        "sfu" => i.sfu,
        "tensor" => i.tensor,
        "uniform" => i.uniform,
        "misc" => i.misc,
        _ => return None,
    })
}

/// `given`, else the latency table's figure; `key` names it in the error where neither is.
fn latency_or_table(
    given: Option<f64>,
    table: Option<&LatencyTable>,
    figure: impl Fn(&LatencyTable) -> Option<f64>,
    file: &str,
    key: &str,
) -> Result<f64> {
    given.or_else(|| table.and_then(figure)).ok_or_else(|| {
        Error::new(format!(
            "{file}: `{key}` has no latency, and no latency table of this architecture (kernel/data/latency) has one: give it"
        ))
    })
}

/// Every pipe's timing, in [`Pipe::ALL`] order.
fn pipes(
    given: &BTreeMap<String, FilePipe>,
    table: Option<&LatencyTable>,
    file: &str,
) -> Result<Vec<PipeTiming>> {
    if let Some(unknown) = given
        .keys()
        .find(|k| Pipe::ALL.iter().all(|p| p.name() != k.as_str()))
    {
        let known: Vec<&str> = Pipe::ALL.iter().map(|p| p.name()).collect();
        return Err(Error::new(format!(
            "{file}: [pipes] `{unknown}` is no pipe; expected one of {}",
            known.join(", ")
        )));
    }
    let pipes = Pipe::ALL
        .iter()
        .map(|p| {
            let name = p.name();
            let pipe = given.get(name).copied().ok_or_else(|| {
                Error::new(format!(
                    "{file}: [pipes] lacks `{name}`; every pipe needs its timing"
                ))
            })?;
            let key = format!("pipes.{name}");
            Ok(PipeTiming {
                latency: latency_or_table(pipe.latency, table, |t| table_latency(t, name), file, &key)?,
                interval: pipe.interval,
                same_warp: pipe.same_warp,
                per_sm: pipe.per_sm,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if pipes
        .iter()
        .any(|p| p.interval <= 0.0 || p.same_warp < 0.0 || p.latency < 0.0)
    {
        return Err(Error::new(format!(
            "{file}: [pipes]: every interval must be positive, latencies and same_warp not negative"
        )));
    }
    Ok(pipes)
}

fn memory(m: FileMemory, table: Option<&LatencyTable>, file: &str) -> Result<MemoryTiming> {
    let level = |given: Option<f64>, key: &str, figure: fn(&LatencyTable) -> f64| {
        latency_or_table(given, table, |t| Some(figure(t)), file, key)
    };
    Ok(MemoryTiming {
        global: level(m.global, "memory.global", |t| t.memory.global)?,
        l2: level(m.l2, "memory.l2", |t| t.memory.l2)?,
        l1: m.l1,
        l2_bytes: m.l2_bytes,
        shared: level(m.shared, "memory.shared", |t| t.memory.shared)?,
        local: level(m.local, "memory.local", |t| t.memory.local)?,
        constant: level(m.constant, "memory.constant", |t| t.memory.constant)?,
        efficiency: m.efficiency,
        queue_cycles: m.queue_cycles,
    })
}

/// `[blocks]`, the barrier the architecture data file's where the file gives none (Hopper's,
/// which the closed-form model reads too: models/data/hopper.toml), the launch rate and
/// overhead the calibrated GPU data file's (models/data/h100-sxm5-80gb.toml's
/// `blockLaunchRate` and `kernelLaunchOverhead`, which the catalog reads too).
fn blocks(b: FileBlocks, newest_major: u8, file: &str) -> Result<BlockTiming> {
    let architecture = format!("{newest_major}.0");
    let missing = |key: &str, home: &str| {
        Error::new(format!(
            "{file}: [blocks] has no `{key}`, and no {home} (models/data) gives compute capability {architecture} one"
        ))
    };
    let barrier = b
        .barrier
        .or_else(|| architecture_value(&architecture, keys::BARRIER_CYCLES))
        .ok_or_else(|| missing("barrier", "architecture data file"))?;
    let calibrated = |given: Option<f64>, key: &str, calibrated_key: &str| {
        given
            .or_else(|| calibrated_value(&architecture, calibrated_key))
            .ok_or_else(|| missing(key, "calibrated GPU data file"))
    };
    Ok(BlockTiming {
        launch_rate: calibrated(b.launch_rate, "launch_rate", queueing::keys::BLOCK_LAUNCH_RATE)?,
        replacement: b.replacement,
        launch_overhead: calibrated(
            b.launch_overhead,
            "launch_overhead",
            queueing::keys::LAUNCH_OVERHEAD,
        )?,
        barrier,
    })
}

/// One architecture family's parameters, with every pipe present.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchParams {
    pub name: String,
    pub source: String,
    /// Compute-capability majors the file's numbers were measured or sourced for.
    pub majors: Vec<u8>,
    /// Majors the file serves for want of a set of their own: a prediction for them says so.
    pub stands_in_for: Vec<u8>,
    /// Warp schedulers per SM; warps are dealt to them round-robin.
    pub schedulers: u32,
    /// Cycles before a warp issues the target of a taken branch, beyond the branch's own gap.
    pub taken_branch: f64,
    /// Whether the `per_sm` pipes share one unit, the SM's L1 data path (sm_70+, whose global,
    /// shared and texture accesses pass one wavefront stage), rather than one unit each
    /// (sm_5x–6x, whose shared memory is a unit apart from L1/texture).
    pub one_l1_data_path: bool,
    /// By pipe, in [`Pipe::ALL`] order.
    pub pipes: Vec<PipeTiming>,
    pub memory: MemoryTiming,
    pub blocks: BlockTiming,
}

/// The shipped files, by name.
pub const SHIPPED: [(&str, &str); 3] = [
    ("hopper.toml", include_str!("../data/hopper.toml")),
    ("maxwell.toml", include_str!("../data/maxwell.toml")),
    ("gt200.toml", include_str!("../data/gt200.toml")),
];

impl ArchParams {
    /// Reads a data file; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<ArchParams> {
        let f: File = toml::from_str(text).map_err(|e| Error::new(format!("{file}: {e}")))?;
        let newest = f.majors.iter().copied().max().unwrap_or(0);
        // Only a table of this very family lends its latencies, not the nearest older one.
        let table = LatencyTable::for_arch(Arch {
            major: newest,
            minor: 0,
        })
        .ok()
        .filter(|t| t.majors.contains(&newest));
        let pipes = pipes(&f.pipes, table.as_ref(), file)?;
        let memory = memory(f.memory, table.as_ref(), file)?;
        let blocks = blocks(f.blocks, newest, file)?;
        let positive = [
            ("schedulers", f64::from(f.schedulers)),
            ("memory.global", memory.global),
            ("memory.efficiency", memory.efficiency),
            ("blocks.launch_rate", blocks.launch_rate),
        ];
        if let Some((key, v)) = positive.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
            return Err(Error::new(format!(
                "{file}: `{key}` = {v}: expected a positive number"
            )));
        }
        Ok(ArchParams {
            name: f.name,
            source: f.source,
            majors: f.majors,
            stands_in_for: f.stands_in_for,
            schedulers: f.schedulers,
            taken_branch: f.taken_branch,
            one_l1_data_path: f.one_l1_data_path,
            pipes,
            memory,
            blocks,
        })
    }

    /// The shipped file serving compute-capability major `major`: its own, else the one that
    /// stands in for it, else the nearest older one ([`ArchParams::substitute_note`] says
    /// when it is not the architecture's own).
    pub fn for_major(major: u8) -> Result<ArchParams> {
        let all = SHIPPED
            .iter()
            .map(|(file, text)| ArchParams::parse(text, &format!("teg/data/{file}")))
            .collect::<Result<Vec<_>>>()?;
        let older = |p: &ArchParams| p.majors.iter().copied().filter(|&m| m <= major).max();
        all.iter()
            .find(|p| p.majors.contains(&major))
            .or_else(|| all.iter().find(|p| p.stands_in_for.contains(&major)))
            .or_else(|| all.iter().filter(|p| older(p).is_some()).max_by_key(|p| older(p)))
            .cloned()
            .ok_or_else(|| Error::new(format!("no TEG parameters serve compute capability {major}.x")))
    }

    /// Says so when these parameters are not `arch`'s own: no TEG set ships for its family,
    /// and another family's numbers time it.
    pub fn substitute_note(&self, arch: Arch) -> Option<String> {
        (!self.majors.contains(&arch.major)).then(|| {
            format!(
                "no TEG parameter set for {arch} (compute capability {}.x): {}'s are used instead, not measured on it",
                arch.major, self.name
            )
        })
    }

    pub fn pipe(&self, p: Pipe) -> PipeTiming {
        self.pipes[pipe_index(p)]
    }
}

/// `p`'s place in [`Pipe::ALL`].
pub fn pipe_index(p: Pipe) -> usize {
    Pipe::ALL.iter().position(|&x| x == p).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_reads_and_hopper_serves_sm90() {
        for (file, text) in SHIPPED {
            ArchParams::parse(text, file).unwrap_or_else(|e| panic!("{e}"));
        }
        assert!(ArchParams::for_major(9).expect("hopper").name.contains("Hopper"));
        assert!(ArchParams::for_major(6)
            .expect("maxwell")
            .name
            .contains("Maxwell"));
        assert!(ArchParams::for_major(12)
            .expect("nearest")
            .name
            .contains("Hopper"));
        // Volta and Ampere have no set of their own: Hopper's stands in, and says so.
        let volta = Arch { major: 7, minor: 0 };
        let stand_in = ArchParams::for_major(7).expect("stand-in");
        assert!(stand_in.name.contains("Hopper"));
        let note = stand_in.substitute_note(volta).expect("not Volta's own");
        assert!(note.contains("no TEG parameter set for sm_70"), "{note}");
        assert_eq!(
            ArchParams::for_major(5)
                .expect("maxwell")
                .substitute_note(Arch::MAXWELL),
            None
        );
    }

    #[test]
    fn hopper_takes_its_measured_latencies_from_the_latency_table() {
        let hopper = ArchParams::for_major(9).expect("hopper");
        let table = LatencyTable::for_arch(Arch::HOPPER).expect("table");
        assert_eq!(hopper.pipe(Pipe::Fp32).latency, table.instruction.fp32);
        assert_eq!(hopper.pipe(Pipe::Sfu).latency, 17.016);
        assert_eq!(hopper.memory.global, table.memory.global);
        assert_eq!(hopper.memory.shared, 28.714);
        // A latency the table has no figure for must be given.
        let text = SHIPPED[0].1.replace("control = { latency = 2,", "control = {");
        let e = ArchParams::parse(&text, "x.toml").expect_err("no control latency");
        assert!(e.to_string().contains("`pipes.control` has no latency"), "{e}");
        // Only the table of the file's own family lends latencies: sm_3x has none.
        let text = SHIPPED[1]
            .1
            .replace("majors = [5]", "majors = [3]")
            .replace("fp32 = { latency = 6,", "fp32 = {");
        let e = ArchParams::parse(&text, "x.toml").expect_err("no sm_3x table");
        assert!(e.to_string().contains("`pipes.fp32` has no latency"), "{e}");
        // Its barrier is the architecture data file's, which the closed-form model reads.
        assert_eq!(
            Some(hopper.blocks.barrier),
            hetsim_models::hierarchy::architecture_value("9.0", "barrierCycles")
        );
    }

    /// One home per number: a TEG file that states a launch rate, a launch overhead or a
    /// barrier which a data file of models/data also holds for its architecture must state
    /// the same value (better: leave it out, as hopper.toml does).
    #[test]
    fn no_teg_file_holds_a_number_another_data_file_holds_otherwise() {
        let disagreements = |text: &str| -> Vec<String> {
            let f: File = toml::from_str(text).expect("parses");
            let newest = f.majors.iter().copied().max().unwrap_or(0);
            let cc = format!("{newest}.0");
            [
                (
                    f.blocks.launch_rate,
                    calibrated_value(&cc, queueing::keys::BLOCK_LAUNCH_RATE),
                    "launch_rate",
                ),
                (
                    f.blocks.launch_overhead,
                    calibrated_value(&cc, queueing::keys::LAUNCH_OVERHEAD),
                    "launch_overhead",
                ),
                (
                    f.blocks.barrier,
                    architecture_value(&cc, keys::BARRIER_CYCLES),
                    "barrier",
                ),
            ]
            .into_iter()
            .filter_map(|(given, elsewhere, key)| match (given, elsewhere) {
                (Some(g), Some(e)) if g != e => Some(format!("{key}: {g} here, {e} in models/data")),
                _ => None,
            })
            .collect()
        };
        for (file, text) in SHIPPED {
            let found = disagreements(text);
            assert!(found.is_empty(), "teg/data/{file}: {found:?}");
        }
        // hopper.toml as it was: 1.6e9 blocks/s against the data file's 1.7459e9.
        let drifted = SHIPPED[0]
            .1
            .replace("[blocks]\n", "[blocks]\nlaunch_rate = 1.6e9\n");
        assert_eq!(disagreements(&drifted).len(), 1, "{drifted}");
        let hopper = ArchParams::for_major(9).expect("hopper");
        assert_eq!(
            Some(hopper.blocks.launch_rate),
            calibrated_value("9.0", "blockLaunchRate")
        );
        assert_eq!(
            Some(hopper.blocks.launch_overhead),
            calibrated_value("9.0", "kernelLaunchOverhead")
        );
    }

    #[test]
    fn a_misspelt_pipe_is_named() {
        let text = SHIPPED[0].1.replace("fp64 = {", "fp46 = {");
        let e = ArchParams::parse(&text, "x.toml").expect_err("fp46 is no pipe");
        assert!(e.to_string().contains("`fp46` is no pipe"), "{e}");
        let text = SHIPPED[0].1.replace("fp64 = { interval = 2, same_warp = 2 }", "");
        let e = ArchParams::parse(&text, "x.toml").expect_err("fp64 missing");
        assert!(e.to_string().contains("lacks `fp64`"), "{e}");
        let fitted = ArchParams::parse(SHIPPED[0].1, "x.toml")
            .expect("parses")
            .memory
            .efficiency;
        let text = SHIPPED[0]
            .1
            .replace(&format!("efficiency = {fitted}"), "efficiency = 0");
        let e = ArchParams::parse(&text, "x.toml").expect_err("zero");
        assert!(e.to_string().contains("memory.efficiency"), "{e}");
    }
}

//! `hetsim kernel analyze FILE`: SASS in, Volkov/Gajger parameters out; `hetsim kernel
//! simulate FILE`: a launch timed by TEG; `kernel predict` is kernel_predict.rs.

use anyhow::{anyhow, bail, Result};
use hetsim_kernel::{analyze, Launch, Options, Report};

use super::kernel_input::{
    catalog_gpu, choose_arch, display_kernel_name, listing_text, parse_arch, with_launch, Launched,
};

use crate::cli::{KernelAnalyzeArgs, KernelCommand, KernelSimulateArgs};
use crate::input::pair;
use hetsim_lab::files::display_name;
use hetsim_lab::launch::launch_of;

pub fn run(command: KernelCommand) -> Result<()> {
    match command {
        KernelCommand::Analyze(args) => analyze_command(args),
        KernelCommand::Simulate(args) => simulate_command(args),
        KernelCommand::Predict(args) => super::kernel_predict::run(args),
    }
}

fn simulate_command(args: KernelSimulateArgs) -> Result<()> {
    with_launch(&args.launch, |launched| simulate_launched(launched, &args))
}

fn simulate_launched(launched: Launched<'_>, args: &KernelSimulateArgs) -> Result<()> {
    let Launched {
        origin,
        kernel,
        choice,
        launch,
        gpu,
        ..
    } = launched;
    let prepared = hetsim_teg::Prepared::new(kernel, choice.arch).map_err(|e| anyhow!("{origin}: {e}"))?;
    let mut notes = choice.notes;
    notes.extend(prepared.params.substitute_note(choice.arch));
    let options = hetsim_teg::Options {
        warps_per_sm: args.warps_per_sm,
        ..hetsim_teg::Options::default()
    };
    let (simulation, bottlenecks) = hetsim_teg::simulate_with_bottlenecks(&prepared, &launch, &gpu, &options)
        .map_err(|e| anyhow!("{origin}: {e}"))?;
    let name = display_kernel_name(kernel);
    if args.json {
        return super::print_json(&serde_json::json!({
            "kernel": name,
            "gpu": args.launch.gpu,
            "arch": choice.arch,
            "parameters": prepared.params.name,
            "simulation": simulation,
            "bottlenecks": bottlenecks,
            "not_modelled": NOT_MODELLED,
            "notes": notes,
            "warnings": choice.warnings,
        }));
    }
    print!(
        "{}",
        simulation_table(
            name,
            &args.launch.gpu,
            &prepared.params.name,
            &simulation,
            &bottlenecks
        )
    );
    for note in &notes {
        println!("note: {note}");
    }
    Ok(())
}

/// What TEG leaves out, said rather than silently taken as free.
const NOT_MODELLED: &str = "static __shared__ arrays (a SASS listing does not give their size: pass it with --dynamic-shared for the occupancy), L1 capacity within a block, TLB misses, the L2 bandwidth";

fn simulation_table(
    kernel: &str,
    gpu: &str,
    params: &str,
    s: &hetsim_teg::Simulation,
    bottlenecks: &[hetsim_teg::Bottleneck],
) -> String {
    let mut out = format!("kernel       {kernel}\nGPU          {gpu} (TEG parameters: {params})\n");
    out += &format!(
        "launch       {} blocks on {} SMs; {} resident per SM ({} warps); the busiest SM runs {}{}\n",
        s.blocks,
        s.active_sms,
        s.resident_blocks,
        s.warps_per_sm,
        s.blocks_on_busiest_sm,
        if (s.simulated_blocks as u64) < s.blocks_on_busiest_sm {
            format!(
                " ({} simulated, the rest at the steady-state period)",
                s.simulated_blocks
            )
        } else {
            String::new()
        }
    );
    out += &format!(
        "time         {:.6} ms ({:.0} cycles)\n",
        s.seconds * 1e3,
        s.cycles
    );
    out += &format!(
        "limiter      {} (issue slots {:.0} % used, memory pipeline {:.0} % of {} sectors)\n",
        s.limiter,
        100.0 * s.issue_utilization,
        100.0 * s.memory_utilization,
        s.memory_slots
    );
    out += "bottlenecks  time without it, and the share of the time it costs\n";
    for b in bottlenecks {
        out += &format!(
            "  {:<28} {:.6} ms  {:>5.1} %\n",
            b.what,
            b.seconds_without * 1e3,
            100.0 * b.share
        );
    }
    out += &format!("  not modelled: {NOT_MODELLED}\n");
    out
}

fn analyze_command(args: KernelAnalyzeArgs) -> Result<()> {
    let origin = display_name(&args.file);
    let explicit = parse_arch(args.arch.as_deref())?;
    let gpu_arch = args
        .gpu
        .as_deref()
        .map(|name| catalog_gpu(name).map(|(_, arch)| (name, arch)))
        .transpose()?;
    let preferred = explicit.or(gpu_arch.map(|(_, a)| a));
    let text = listing_text(&args.file, preferred)?;
    let listing = hetsim_kernel::parse(&text).map_err(|e| anyhow!("{origin}: {e}"))?;
    // Without --gpu and --arch, a listing that names no architecture is the analyser's to
    // decide (the thesis's numbered listing is sm_52).
    let kernel = hetsim_kernel::select_kernel(&listing, args.kernel.as_deref(), preferred)
        .map_err(|e| anyhow!("{origin}: {e}"))?;
    let choice = match (explicit, gpu_arch) {
        (None, None) => None,
        _ => Some(choose_arch(explicit, kernel, gpu_arch, &origin)?),
    };
    let options = Options {
        kernel: args.kernel.clone(),
        arch: choice.as_ref().map(|c| c.arch),
        trips: trips(&args.trips)?,
        launch: launch(&args)?,
        calibrated: None,
    };
    let mut report = analyze(&listing, &options).map_err(|e| anyhow!("{origin}: {e}"))?;
    if let Some(c) = choice {
        report.notes.splice(0..0, c.notes);
    }
    if args.json {
        return super::print_json(&report);
    }
    print!("{}", table(&report));
    Ok(())
}

/// `--trip L0=8` → {L0: 8}.
fn trips(flags: &[String]) -> Result<std::collections::BTreeMap<String, f64>> {
    flags
        .iter()
        .map(|flag| {
            let (id, n) = pair(flag, "--trip")?;
            let n: f64 = n
                .parse()
                .map_err(|_| anyhow!("--trip {flag}: `{n}` is not a number"))?;
            if !(n >= 0.0 && n.is_finite()) {
                bail!("--trip {flag}: a trip count is a number ≥ 0");
            }
            Ok((id.to_string(), n))
        })
        .collect()
}

/// The launch of `--grid`, `--block`, `--args`, if given.
fn launch(args: &KernelAnalyzeArgs) -> Result<Option<Launch>> {
    let (Some(grid), Some(block)) = (&args.grid, &args.block) else {
        return Ok(None);
    };
    launch_of(grid, block, args.args.as_deref(), args.dynamic_shared).map(Some)
}

/// The report as a person reads it.
fn table(r: &Report) -> String {
    let mut out = String::new();
    let name = match &r.demangled {
        Some(d) => format!("{d}  ({})", r.name),
        None if r.name.is_empty() => "(unnamed listing)".to_string(),
        None => r.name.clone(),
    };
    out += &format!("kernel        {name}\n");
    out += &format!("architecture  {}  (latencies: {})\n", r.arch, r.latency_table);
    out += &format!("mode          {}\n", r.mode);
    out += &format!("instructions  {} in the listing\n", r.instructions);
    if r.loops.is_empty() {
        out += "loops         none\n";
    }
    for l in &r.loops {
        out += &format!(
            "loop {:<8} header {:#06x}, back edge {:#06x}, {} instructions, depth {}\n",
            l.id, l.header, l.back_edge, l.body_instructions, l.depth
        );
    }
    if let Some(e) = &r.emulation {
        out += &format!(
            "launch        {} warps in {} group(s), {} emulated; {}\n",
            e.warps, e.groups, e.emulated_warps, e.coverage
        );
        for (id, runs) in &e.loop_runs_per_warp {
            out += &format!("  {id} runs {runs:.3} times per warp\n");
        }
    }
    out += "per warp\n";
    out += &format!("  executed    {}\n", r.per_warp.executed);
    out += &format!("  issued      {}\n", r.per_warp.issued);
    out += &format!("  CUDA cores  {}\n", r.per_warp.cuda_core);
    for (pipe, q) in &r.per_warp.by_pipe {
        out += &format!("    {pipe:<13} {q}\n");
    }
    out += &format!("  global bytes   {}\n", r.gmem_bytes_per_warp);
    out += &format!("  latency bound  {} cycles\n", r.latency_bound);
    if let Some(m) = &r.memory {
        out += "memory hierarchy per warp (gpu-queueing's kernel_params keys; docs/MODELS.md)\n";
        out += &format!("  L1Wavefronts          {:.3}\n", m.l1_wavefronts);
        out += &format!("  L2BytesTransferred    {:.3}\n", m.l2_bytes);
        out += &format!(
            "  DRAMBytesTransferred  {:.3}  (if L2 holds what the launch touches)\n",
            m.dram_bytes
        );
        out += &format!("  sharedWavefronts      {:.3}\n", m.shared_wavefronts);
        out += &format!("  barriers              {:.3}\n", m.barriers);
    }
    if let Some(regs) = r.registers {
        out += &format!("registers     {regs} per thread (estimated from the listing)\n");
    }
    for u in &r.unresolved {
        out += &format!(
            "unresolved    line {} ({:#06x}) `{}`: {}\n",
            u.line, u.address, u.instruction, u.reason
        );
    }
    let p = &r.parameters;
    out += "parameters (hetsim model volkov --params, sim.compute)\n";
    out += &format!("  CUDACoreInstructions  {}\n", p.CUDACoreInstructions);
    out += &format!("  issuedInstructions    {}\n", p.issuedInstructions);
    out += &format!("  GMEMBytesTransferred  {}\n", p.GMEMBytesTransferred);
    out += &format!("  latencyBound          {}\n", p.latencyBound);
    for note in &r.notes {
        out += &format!("note: {note}\n");
    }
    out
}

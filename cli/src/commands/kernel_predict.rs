//! `hetsim kernel predict FILE`: one launch's time on one catalog GPU by the GPU models, with
//! what limits it, the occupancy, the bandwidth reached, the error bar and the inputs.
//!
//! Nothing here models anything: the launch goes through the path a simulation takes. The
//! listing becomes a system of one GPU node per model and one `[[kernel]]`; `kernel_params()`
//! ([`KernelLibrary::params`]) analyses the launch; the built-in Rhai models
//! (system/models/gpu-*.rhai) time it, and `gpu-teg` runs TEG's plan as `teg_kernel` does.

use anyhow::{anyhow, bail, Result};
use hetsim_kernel::{Arch, Arg, Launch};
use hetsim_models::occupancy;
use hetsim_models::queueing::keys;
use hetsim_scripting::computational::{Models, Timed};
use hetsim_scripting::kernels::KernelLibrary;
use hetsim_scripting::sandbox::{Limits, SliceClock};
use hetsim_system::{System, SystemFile};
use rhai::{Dynamic, Map};
use serde::Serialize;
use serde_json::json;

use super::kernel_input::{display_kernel_name, with_launch, Launched};
use crate::cli::{GpuModel, KernelPredictArgs};

/// The name the system gives the kernel.
const KERNEL: &str = "kernel";

/// One model's prediction, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub model: &'static str,
    pub seconds: Option<f64>,
    pub limiter: Option<String>,
    /// Half-width of the 90 % error bar relative to the time, where the model and the GPU's
    /// calibration give one.
    pub error_bar: Option<f64>,
    /// The DRAM bytes the analysis counts for the launch over the predicted time [bytes/s].
    pub achieved_bandwidth: Option<f64>,
    /// Why the model gives no time for this launch on this GPU.
    pub unavailable: Option<String>,
}

impl Prediction {
    fn unavailable(model: GpuModel, reason: String) -> Prediction {
        Prediction {
            model: model.name(),
            seconds: None,
            limiter: None,
            error_bar: None,
            achieved_bandwidth: None,
            unavailable: Some(reason),
        }
    }
}

/// Everything one prediction needs: the system, its kernels, the analysed launch.
struct Setup {
    system: System,
    library: std::rc::Rc<KernelLibrary>,
    params: Map,
    gpu: hetsim_teg::Gpu,
    /// DRAM bytes of the whole launch, by the analysis.
    dram_bytes: f64,
}

pub fn run(args: KernelPredictArgs) -> Result<()> {
    with_launch(&args.launch, |launched| predict(launched, &args))
}

fn predict(launched: Launched<'_>, args: &KernelPredictArgs) -> Result<()> {
    let Launched {
        origin,
        text,
        kernel,
        choice,
        launch,
        gpu,
    } = launched;
    let function = (!kernel.name.is_empty()).then(|| kernel.name.clone());
    let setup = setup(text, function, choice.arch, &launch, &args.launch.gpu, gpu)
        .map_err(|e| anyhow!("{origin}: {e}"))?;
    let mut notes = choice.notes;
    let teg_params = hetsim_teg::ArchParams::for_major(choice.arch.major).map_err(|e| anyhow!("{e}"))?;
    let models: Vec<GpuModel> = if args.compare {
        GpuModel::ALL.to_vec()
    } else {
        vec![match args.model {
            Some(m) => m,
            None => default_model(&setup, choice.arch, &args.launch.gpu, &mut notes),
        }]
    };
    if models.contains(&GpuModel::Teg) {
        notes.extend(teg_params.substitute_note(choice.arch));
    }
    let predictions = predict_each(&setup, &models)?;
    if !args.compare {
        if let Some(reason) = predictions.first().and_then(|p| p.unavailable.clone()) {
            bail!("{origin}: {}: {reason}", models[0].name());
        }
    }
    let occupancy = occupancy_of(&setup, &args.launch.gpu)?;
    let name = display_kernel_name(kernel);
    let inputs: serde_json::Map<String, serde_json::Value> = setup
        .params
        .iter()
        .filter(|(k, _)| k.as_str() != "launch")
        .map(|(k, v)| (k.to_string(), json_of(v)))
        .collect();
    let report = json!({
        "kernel": name,
        "gpu": args.launch.gpu,
        "arch": choice.arch,
        "teg_parameters": models.contains(&GpuModel::Teg).then_some(teg_params.name),
        "occupancy": occupancy,
        "inputs": inputs,
        "predictions": predictions,
        "notes": notes,
        "warnings": choice.warnings,
    });
    if args.json {
        return super::print_json(&report);
    }
    print!("{}", table(&report, &predictions));
    Ok(())
}

/// The recommended model (docs/MODELS.md): gpu-queueing where the GPU has its calibration;
/// else TEG, where the architecture has a TEG set of its own; else Volkov's. A note says
/// which was taken and why.
fn default_model(setup: &Setup, arch: Arch, gpu: &str, notes: &mut Vec<String>) -> GpuModel {
    if queueing_calibrated(setup) {
        return GpuModel::Queueing;
    }
    let own_teg = hetsim_teg::ArchParams::for_major(arch.major).is_ok_and(|p| p.majors.contains(&arch.major));
    let fallback = if own_teg { GpuModel::Teg } else { GpuModel::Volkov };
    notes.push(format!(
        "gpu-queueing, the recommended model, has no calibration for {gpu} (`hetsim calibrate gpu` gives one): {} used instead",
        fallback.name()
    ));
    fallback
}

/// Whether the GPU carries gpu-queueing's calibration (`hetsim calibrate gpu`).
fn queueing_calibrated(setup: &Setup) -> bool {
    setup.system.nodes[0]
        .component
        .attributes
        .contains_key(keys::MEMORY_QUEUE_CYCLES)
}

/// A system of one node per model on the GPU `gpu_name`, the listing as its one kernel, and
/// the launch analysed by `kernel_params()`.
fn setup(
    text: &str,
    function: Option<String>,
    arch: Arch,
    launch: &Launch,
    gpu_name: &str,
    gpu: hetsim_teg::Gpu,
) -> Result<Setup> {
    let names: Vec<String> = launch
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            Arg::Pointer => format!("*p{i}"),
            _ => format!("p{i}"),
        })
        .collect();
    let nodes: Vec<_> = GpuModel::ALL
        .iter()
        .map(|m| json!({"id": m.name(), "component": gpu_name, "model": m.name()}))
        .collect();
    let mut kernel = json!({"name": KERNEL, "listing": text, "params": names, "arch": arch.to_string()});
    if let Some(f) = function {
        kernel["function"] = json!(f);
    }
    let value = json!({"node": nodes, "kernel": [kernel]});
    let system = SystemFile::from_value(value, "kernel predict")
        .and_then(|f| f.resolve("kernel predict", None))
        .map_err(|e| anyhow!("{e}"))?;
    let library = std::rc::Rc::new(KernelLibrary::for_system(&system).map_err(|e| anyhow!("{e}"))?);
    let mut call = Map::new();
    let dims =
        |d: [u32; 3]| Dynamic::from_array(d.iter().map(|&x| Dynamic::from_int(i64::from(x))).collect());
    call.insert("grid".into(), dims(launch.grid));
    call.insert("block".into(), dims(launch.block));
    call.insert(
        "dynamicSharedMemory".into(),
        Dynamic::from_int(i64::from(launch.dynamic_shared)),
    );
    for (i, a) in launch.args.iter().enumerate() {
        let value = match a {
            Arg::Int(v) => Dynamic::from_int(*v),
            Arg::Float(v) => Dynamic::from_float(*v),
            Arg::Pointer => continue,
        };
        call.insert(format!("p{i}").into(), value);
    }
    let params = library.params(KERNEL, &call).map_err(|e| anyhow!("{e}"))?;
    let number = |key: &str| params.get(key).and_then(|v| v.as_float().ok());
    let threads: u64 = launch.block.iter().map(|&b| u64::from(b)).product();
    let blocks: u64 = launch.grid.iter().map(|&g| u64::from(g)).product();
    let warps = blocks as f64 * threads.div_ceil(32) as f64;
    let per_warp = number("DRAMBytesTransferred")
        .or_else(|| number("GMEMBytesTransferred"))
        .unwrap_or(0.0);
    Ok(Setup {
        system,
        library,
        params,
        gpu,
        dram_bytes: per_warp * warps,
    })
}

/// Each model's prediction, in the order asked.
fn predict_each(setup: &Setup, models: &[GpuModel]) -> Result<Vec<Prediction>> {
    let clock = SliceClock::new(Default::default());
    let compiled = Models::compile(&setup.system, &Limits::default(), &clock, setup.library.clone())
        .map_err(|e| anyhow!("{e}"))?;
    Ok(models
        .iter()
        .map(|&m| {
            let timed = match m {
                GpuModel::Teg => teg(setup),
                GpuModel::HongKim => Err(HONG_KIM.to_string()),
                GpuModel::Volkov => volkov_params(setup).and_then(|p| rhai_model(&compiled, m, p)),
                GpuModel::Queueing if !queueing_calibrated(setup) => Err(format!(
                    "{} has no gpu-queueing calibration ({}, {}, …: `hetsim calibrate gpu` fits them on measurements)",
                    setup.system.nodes[0].component.name,
                    keys::MEMORY_BANDWIDTH,
                    keys::MEMORY_QUEUE_CYCLES
                )),
                GpuModel::Queueing => rhai_model(&compiled, m, setup.params.clone()),
            };
            match timed {
                Ok(t) => Prediction {
                    model: m.name(),
                    seconds: Some(t.seconds),
                    limiter: t.limiter.map(|l| l.to_string()),
                    error_bar: t.uncertainty,
                    achieved_bandwidth: (t.seconds > 0.0).then(|| setup.dram_bytes / t.seconds),
                    unavailable: None,
                },
                Err(reason) => Prediction::unavailable(m, reason),
            }
        })
        .collect())
}

/// Why gpu-hong-kim gives no time from a listing.
const HONG_KIM: &str = "Hong & Kim's model needs the GPU's departure delays (departure_del_coal, departure_del_uncoal: seed 000 Table 1), measured for no catalog GPU; give every input to `hetsim model hong-kim --params`";

/// The time the node of model `m` gives.
fn rhai_model(models: &Models, m: GpuModel, params: Map) -> std::result::Result<Timed, String> {
    let node = GpuModel::ALL.iter().position(|&x| x == m).unwrap_or(0);
    models.compute_time(node, params).map_err(|e| e.to_string())
}

/// TEG's time and limiter by the plan `teg_kernel` runs.
fn teg(setup: &Setup) -> std::result::Result<Timed, String> {
    let key = setup
        .params
        .get("launch")
        .and_then(|v| v.clone().into_immutable_string().ok())
        .ok_or("the analysis emulated no launch")?;
    let (prepared, plan) = setup
        .library
        .teg_plan(&key, &setup.gpu, None)
        .map_err(|e| e.to_string())?;
    let s = hetsim_teg::run(&prepared, &plan, &setup.gpu, hetsim_teg::WhatIf::default());
    Ok(Timed {
        limiter: Some(s.limiter.into()),
        ..Timed::bare(s.seconds)
    })
}

/// kernel_params()'s map with `occupancy`, the resident warps per SM of the calculator, which
/// Volkov's model takes as an input (seed 004, eq. 4.3).
fn volkov_params(setup: &Setup) -> std::result::Result<Map, String> {
    let warps = occupancy_output(setup)?.active_warps_per_sm;
    let mut params = setup.params.clone();
    params.insert("occupancy".into(), Dynamic::from_float(f64::from(warps)));
    Ok(params)
}

/// The occupancy calculator on the launch (seed 004, section 4.4.1).
fn occupancy_output(setup: &Setup) -> std::result::Result<occupancy::Output, String> {
    let int = |key: &str| setup.params.get(key).and_then(|v| v.as_int().ok());
    let limits = occupancy::limits_of(&setup.gpu.compute_capability).ok_or_else(|| {
        format!(
            "compute capability {} has no occupancy limits",
            setup.gpu.compute_capability
        )
    })?;
    let input = occupancy::Input {
        limits,
        threads_per_block: int("blockSize").unwrap_or(0) as u32,
        registers_per_thread: int("registersPerThread").unwrap_or(1).max(1) as u32,
        shared_memory_per_block: int("dynamicSharedMemory").unwrap_or(0) as u32,
    };
    Ok(occupancy::evaluate(&input))
}

fn occupancy_of(setup: &Setup, gpu: &str) -> Result<serde_json::Value> {
    let o = occupancy_output(setup).map_err(|e| anyhow!("--gpu {gpu}: {e}"))?;
    Ok(json!({
        "warps_per_sm": o.active_warps_per_sm,
        "blocks_per_sm": o.active_blocks_per_sm,
        "fraction": o.occupancy,
        "limiter": o.limiter,
    }))
}

fn json_of(v: &Dynamic) -> serde_json::Value {
    if let Ok(i) = v.as_int() {
        json!(i)
    } else if let Ok(x) = v.as_float() {
        json!(x)
    } else {
        json!(v.to_string())
    }
}

/// The report as a person reads it.
fn table(r: &serde_json::Value, predictions: &[Prediction]) -> String {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mut out = format!("kernel       {}\n", text(&r["kernel"]));
    out += &format!("GPU          {} ({})\n", text(&r["gpu"]), text(&r["arch"]));
    let o = &r["occupancy"];
    out += &format!(
        "occupancy    {} warps per SM ({} blocks, {:.0} %), limited by {}\n",
        o["warps_per_sm"],
        o["blocks_per_sm"],
        100.0 * o["fraction"].as_f64().unwrap_or(0.0),
        text(&o["limiter"])
    );
    out += &format!(
        "{:<14} {:>13} {:>9}  {:>11}  limiter\n",
        "model", "time [ms]", "± 90 %", "bandwidth"
    );
    for p in predictions {
        match (p.seconds, &p.unavailable) {
            (Some(s), _) => {
                out += &format!(
                    "{:<14} {:>13.6} {:>9}  {:>11}  {}\n",
                    p.model,
                    s * 1e3,
                    p.error_bar
                        .map_or("none".to_string(), |e| format!("{:.1} %", 100.0 * e)),
                    p.achieved_bandwidth
                        .map_or("-".to_string(), |b| format!("{:.1} GB/s", b / 1e9)),
                    p.limiter.as_deref().unwrap_or("-")
                )
            }
            (None, reason) => {
                out += &format!(
                    "{:<14} not available: {}\n",
                    p.model,
                    reason.as_deref().unwrap_or("")
                )
            }
        }
    }
    out += "inputs (kernel_params(): docs/MODELS.md)\n";
    if let Some(inputs) = r["inputs"].as_object() {
        for (k, v) in inputs {
            out += &format!("  {k:<22} {v}\n");
        }
    }
    if let Some(params) = r["teg_parameters"].as_str() {
        out += &format!("TEG parameters: {params}\n");
    }
    for note in r["notes"].as_array().into_iter().flatten() {
        out += &format!("note: {}\n", text(note));
    }
    out
}

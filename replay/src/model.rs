//! `--compute model:FILE.rhai`: a node's time from the user's Rhai functions.
//!
//! The script defines `fn compute_time(node)` (GPU compute nodes), `fn cpu_time(node)`
//! (CPU ops: nodes with `is_cpu_op`), or both; nodes of a kind whose function it does not
//! define keep their recorded time. `node` is a map: `id`, `name`, `type` ("COMP", ...),
//! `duration` (the recorded time [s]), `num_ops`, `tensor_size` and `dtype` ("bf16", ...:
//! hetsim_chakra::DataType) where the trace has them, and `gpu`, the rank's GPU: `name`,
//! `peak_flops` (the fallback rate, FP32's) [FLOP/s], `peaks` (a map of the rate of each
//! data type the catalog states, by `dtype` name) and `memory_bandwidth` [B/s] (0 where
//! the catalog states none).
//!
//! `compute_time` returns seconds, or a map of parameters that the rank's node's
//! computational model times exactly as it times `sim.compute(map)` in an application
//! (hetsim_scripting::computational::Models::compute_time): `kernel_params(name, #{…})`,
//! the system's `[[kernel]]` SASS emulated for the launch, is such a map, so a kernel whose
//! SASS the user has is timed by the system's GPU model (`gpu-queueing`, `gpu-volkov`,
//! `gpu-teg`, ...) on the rank's catalog GPU. `cpu_time` returns seconds, or a map that the
//! model of the rank's host CPU times (the CPU node the GPU's host link joins, as for memory
//! loads and stores: `#{ ops: 2e9 }` on a `cpu-flops` host takes 2·10⁹ FLOP at its
//! `performance`); the CPU stream then waits that long (the host's energy is not charged for
//! it: the op runs on no simulated core). The script runs in
//! hetsim's sandbox (operation and time limits, no modules, no `eval`) with the analytic
//! model functions scripts have (`volkov_kernel`, ...) and `kernel_params`.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use hetsim_chakra::{DataType, TraceNode};
use hetsim_scripting::computational::{Models, Timed};
use hetsim_scripting::functions::register_models;
use hetsim_scripting::kernels::{self, KernelLibrary};
use hetsim_scripting::sandbox::{engine, SliceClock};
use hetsim_scripting::Limits;
use rhai::{Dynamic, Engine, Map, Scope, AST};

use crate::policy::Peak;

/// What a model function sees of the rank's GPU.
pub struct Gpu<'a> {
    pub name: &'a str,
    pub peak: Option<&'a Peak>,
}

/// A compiled model script.
pub struct ScriptModel {
    origin: PathBuf,
    engine: Engine,
    ast: AST,
    clock: SliceClock,
    has_compute_time: bool,
    has_cpu_time: bool,
}

impl ScriptModel {
    /// Compiles `source` (named `origin` in errors), with `kernel_params` over `kernels`;
    /// it must define `compute_time(node)` or `cpu_time(node)`.
    pub fn compile(origin: &Path, source: &str, kernels: Rc<KernelLibrary>) -> Result<Self, String> {
        let clock = SliceClock::new(Default::default());
        let mut engine = engine(&Limits::default(), &clock);
        register_models(&mut engine);
        kernels::register(&mut engine, kernels);
        let ast = engine
            .compile(source)
            .map_err(|e| format!("{}: {e}", origin.display()))?;
        let defines = |name: &str| {
            ast.iter_functions()
                .any(|f| f.name == name && f.params.len() == 1)
        };
        let (has_compute_time, has_cpu_time) = (defines("compute_time"), defines("cpu_time"));
        if !has_compute_time && !has_cpu_time {
            return Err(format!(
                "{}: defines neither fn compute_time(node) nor fn cpu_time(node)",
                origin.display()
            ));
        }
        Ok(ScriptModel {
            origin: origin.to_owned(),
            engine,
            ast,
            clock,
            has_compute_time,
            has_cpu_time,
        })
    }

    /// The time of GPU compute `node` on `gpu`, or `None` when the script defines no
    /// `compute_time`. A returned map is timed by `models`' model of system node
    /// `system_node` (the rank's).
    pub fn gpu_time(
        &self,
        node: &TraceNode,
        gpu: &Gpu,
        models: &Models,
        system_node: usize,
    ) -> Result<Option<Timed>, String> {
        if !self.has_compute_time {
            return Ok(None);
        }
        self.timed("compute_time", node, gpu, models, Some(system_node))
            .map(Some)
    }

    /// The time of CPU op `node` [s], or `None` when the script defines no `cpu_time`. A
    /// returned map is timed by `models`' model of system node `host`, the rank's host CPU
    /// (an error where the rank's GPU has none).
    pub fn cpu_time(
        &self,
        node: &TraceNode,
        gpu: &Gpu,
        models: &Models,
        host: Option<usize>,
    ) -> Result<Option<f64>, String> {
        if !self.has_cpu_time {
            return Ok(None);
        }
        self.timed("cpu_time", node, gpu, models, host)
            .map(|t| Some(t.seconds))
    }

    /// `function`'s value for `node`: seconds, or a map timed by the model of `system_node`.
    fn timed(
        &self,
        function: &str,
        node: &TraceNode,
        gpu: &Gpu,
        models: &Models,
        system_node: Option<usize>,
    ) -> Result<Timed, String> {
        let value = self.call(function, node, gpu)?;
        let origin = self.origin.display();
        let timed = match value.clone().try_cast::<Map>() {
            Some(params) => {
                let at = system_node.ok_or_else(|| {
                    format!("{origin}: {function} returned a map, but the rank's GPU has no host CPU in the system to time it (no CPU node joined to it by a link)")
                })?;
                models.compute_time(at, params).map_err(|e| {
                    format!("{origin}: {function} returned a map, which the node's model could not time: {e}")
                })?
            }
            None => Timed::bare(self.seconds(function, &value)?),
        };
        self.checked(function, timed.seconds)?;
        Ok(timed)
    }

    fn call(&self, function: &str, node: &TraceNode, gpu: &Gpu) -> Result<Dynamic, String> {
        self.clock.restart();
        self.engine
            .call_fn(&mut Scope::new(), &self.ast, function, (node_map(node, gpu),))
            .map_err(|e| format!("{}: {function}: {e}", self.origin.display()))
    }

    fn seconds(&self, function: &str, value: &Dynamic) -> Result<f64, String> {
        value
            .as_float()
            .or_else(|_| value.as_int().map(|i| i as f64))
            .map_err(|t| {
                format!(
                    "{}: {function} returned {t}, expected seconds",
                    self.origin.display()
                )
            })
    }

    fn checked(&self, function: &str, seconds: f64) -> Result<f64, String> {
        if seconds.is_finite() && seconds >= 0.0 {
            Ok(seconds)
        } else {
            Err(format!(
                "{}: {function} returned {seconds} s (a time is finite and >= 0)",
                self.origin.display()
            ))
        }
    }
}

/// The map a model function takes: the node and its rank's GPU.
fn node_map(node: &TraceNode, gpu: &Gpu) -> Map {
    let a = &node.attributes;
    let mut map = Map::new();
    map.insert("id".into(), Dynamic::from_int(node.id as i64));
    map.insert("name".into(), node.name.clone().into());
    map.insert("type".into(), node.kind.name().into());
    map.insert(
        "duration".into(),
        Dynamic::from_float(node.duration_micros as f64 * 1e-6),
    );
    if let Some(x) = a.num_ops {
        map.insert("num_ops".into(), Dynamic::from_float(x));
    }
    if let Some(x) = a.tensor_size {
        map.insert("tensor_size".into(), Dynamic::from_float(x));
    }
    if let Some(t) = a.dtype {
        map.insert("dtype".into(), t.name().into());
    }
    let mut g = Map::new();
    g.insert("name".into(), gpu.name.into());
    g.insert(
        "peak_flops".into(),
        Dynamic::from_float(gpu.peak.map_or(0.0, |p| p.flops)),
    );
    let peaks: Map = DataType::ALL
        .iter()
        .filter_map(|&t| {
            Some((
                t.name().into(),
                Dynamic::from_float(gpu.peak?.by_type[t as usize]?),
            ))
        })
        .collect();
    g.insert("peaks".into(), peaks.into());
    g.insert(
        "memory_bandwidth".into(),
        Dynamic::from_float(gpu.peak.map_or(0.0, |p| p.bandwidth)),
    );
    map.insert("gpu".into(), g.into());
    map
}

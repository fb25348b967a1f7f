//! `--compute model:FILE.rhai`: a compute node's time from the user's Rhai function.
//!
//! The script defines `fn compute_time(node)`; `node` is a map: `id`, `name`, `type`
//! ("COMP"), `duration` (the recorded time [s]), `num_ops` and `tensor_size` where the
//! trace has them, and `gpu`, the rank's GPU: `name`, `peak_flops` [FLOP/s] and
//! `memory_bandwidth` [B/s] (0 where the catalog states none). It returns seconds. The
//! script runs in hetsim's sandbox (operation and time limits, no modules, no `eval`) and
//! has the analytic model functions scripts have (`volkov_kernel`, ...).

use std::path::{Path, PathBuf};

use hetsim_chakra::TraceNode;
use hetsim_scripting::functions::register_models;
use hetsim_scripting::sandbox::{engine, SliceClock};
use hetsim_scripting::Limits;
use rhai::{Dynamic, Engine, Map, Scope, AST};

use crate::policy::Peak;

/// A compiled model script.
pub struct ScriptModel {
    origin: PathBuf,
    engine: Engine,
    ast: AST,
    clock: SliceClock,
}

impl ScriptModel {
    /// Compiles `source` (named `origin` in errors); it must define `compute_time(node)`.
    pub fn compile(origin: &Path, source: &str) -> Result<Self, String> {
        let clock = SliceClock::new(Default::default());
        let mut engine = engine(&Limits::default(), &clock);
        register_models(&mut engine);
        let ast = engine
            .compile(source)
            .map_err(|e| format!("{}: {e}", origin.display()))?;
        if !ast
            .iter_functions()
            .any(|f| f.name == "compute_time" && f.params.len() == 1)
        {
            return Err(format!("{}: defines no fn compute_time(node)", origin.display()));
        }
        Ok(ScriptModel {
            origin: origin.to_owned(),
            engine,
            ast,
            clock,
        })
    }

    /// The time of `node` on a GPU named `gpu` with `peak` [s].
    pub fn time(&self, node: &TraceNode, gpu: &str, peak: Option<&Peak>) -> Result<f64, String> {
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
        let mut g = Map::new();
        g.insert("name".into(), gpu.into());
        g.insert(
            "peak_flops".into(),
            Dynamic::from_float(peak.map_or(0.0, |p| p.flops)),
        );
        g.insert(
            "memory_bandwidth".into(),
            Dynamic::from_float(peak.map_or(0.0, |p| p.bandwidth)),
        );
        map.insert("gpu".into(), g.into());
        self.clock.restart();
        let value: Dynamic = self
            .engine
            .call_fn(&mut Scope::new(), &self.ast, "compute_time", (map,))
            .map_err(|e| format!("{}: compute_time: {e}", self.origin.display()))?;
        let seconds = value
            .as_float()
            .or_else(|_| value.as_int().map(|i| i as f64))
            .map_err(|t| {
                format!(
                    "{}: compute_time returned {t}, expected seconds",
                    self.origin.display()
                )
            })?;
        if seconds.is_finite() && seconds >= 0.0 {
            Ok(seconds)
        } else {
            Err(format!(
                "{}: compute_time returned {seconds} s (a time is finite and >= 0)",
                self.origin.display()
            ))
        }
    }
}

//! Computational models: Rhai sources whose `compute_time(params)` (nodes) and
//! `transfer_time(params)` (links) return seconds, with the component's attributes as
//! constants, plus `attributes`, the whole map of them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use hetsim_models::catalog::Component;
use hetsim_models::Scalar;
use hetsim_simulator::word_hash::WordMap;
use hetsim_simulator::{Direction, Estimate, HostMemory, LinkId, LinkTiming};
use rhai::{Dynamic, Engine, ImmutableString, Map, Scope, AST};

use crate::errors::{located, parse_error, ScriptError};
use crate::functions::register_models;
use crate::kernels::KernelLibrary;
use crate::sandbox::{self, Limits, SliceClock};
use hetsim_system::{ModelSource, System};

/// A model bound to one component: its compiled source and the component's attributes.
struct Instance {
    origin: Rc<str>,
    ast: Rc<AST>,
    constants: Rc<HashMap<String, Dynamic>>,
}

/// `teg_kernel(params)`: the seconds TEG gives the launch `params.launch` (from
/// `kernel_params`) on the GPU whose model is being evaluated (its `SMs`, `SMCoreClock`,
/// `memoryClock`, `busWidth`, `dataRate`, `computeCapability`), with `params.occupancy`
/// resident warps per SM if given.
fn register_teg(
    engine: &mut Engine,
    kernels: Rc<KernelLibrary>,
    current: Rc<RefCell<Rc<HashMap<String, Dynamic>>>>,
) {
    engine.register_fn(
        "teg_kernel",
        move |params: Map| -> Result<f64, Box<rhai::EvalAltResult>> {
            let launch = params
                .get("launch")
                .and_then(|v| v.clone().into_immutable_string().ok())
                .ok_or("teg_kernel: give `launch`, as kernel_params() returns it")?;
            let attributes: hetsim_models::Params = current
                .borrow()
                .iter()
                .filter_map(|(k, v)| {
                    let scalar = match v.as_float() {
                        Ok(x) => Scalar::Number(x),
                        Err(_) => Scalar::from(v.clone().into_immutable_string().ok()?.as_str()),
                    };
                    Some((k.clone(), scalar))
                })
                .collect();
            let gpu = hetsim_teg::Gpu::from_params(&attributes)
                .map_err(|e| format!("teg_kernel: the GPU's {e}"))?;
            let occupancy = match params.get("occupancy") {
                Some(v) => Some(
                    v.as_float()
                        .or_else(|_| v.as_int().map(|i| i as f64))
                        .map_err(|_| "teg_kernel: `occupancy` is warps per SM, a number")?
                        as u32,
                ),
                None => None,
            };
            kernels
                .teg_seconds(&launch, &gpu, occupancy)
                .map_err(|e| e.to_string().into())
        },
    );
}

/// A scalar parameter, as a memo key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum KeyValue {
    Number(u64),
    Bool(bool),
    Text(ImmutableString),
}

/// An instance and its parameters: equal keys give equal times, since a Rhai function sees
/// only its arguments and the constants of its instance. Transfers, called for every
/// message, have a key that needs no allocation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum MemoKey {
    Transfer(usize, u64, Direction, HostMemory),
    Params(usize, Vec<(String, KeyValue)>),
}

/// Every computational model of a system, with the engine that evaluates them.
pub struct Models {
    engine: Engine,
    /// The attributes visible to the model being evaluated.
    current: Rc<RefCell<Rc<HashMap<String, Dynamic>>>>,
    /// One per distinct (model, component) pair.
    instances: Vec<Instance>,
    /// The instance of each node and of each link.
    nodes: Vec<usize>,
    /// Each node's model as its system names it (for compute spans).
    node_models: Vec<Arc<str>>,
    links: Vec<usize>,
    /// Hashed by the engine's word hasher: SipHash was 6 % of a ping-pong's instructions.
    memo: RefCell<WordMap<MemoKey, Timed>>,
}

/// What a model returns: seconds, for a compute optionally the power drawn meanwhile, and
/// optionally the error bar of the seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    pub seconds: f64,
    /// What bounds a compute, where the model says (its map's `limiter`).
    pub limiter: Option<rhai::ImmutableString>,
    /// [W]; `None` leaves the node's `powerConsumptionLoad`.
    pub power: Option<f64>,
    /// The half-width of the error bar relative to `seconds` (0.05 = ±5 %), at the 90 %
    /// coverage of hetsim's calibrated models; `None` when the model states none.
    pub uncertainty: Option<f64>,
    /// What a compute's trace span says: the model, the kernel, the limiter (`None` for a
    /// transfer or a bare duration).
    pub detail: Option<Arc<str>>,
}

impl Timed {
    /// A duration with nothing said of it: no limiter, power, error bar or detail.
    pub fn bare(seconds: f64) -> Timed {
        Timed {
            seconds,
            limiter: None,
            power: None,
            uncertainty: None,
            detail: None,
        }
    }

    /// The error bar's half-width [s].
    pub fn uncertainty_seconds(&self) -> f64 {
        self.uncertainty.map_or(0.0, |u| u * self.seconds)
    }
}

fn scalar(value: &Scalar) -> Dynamic {
    match value {
        Scalar::Number(x) => Dynamic::from_float(*x),
        Scalar::Text(s) => Dynamic::from(s.clone()),
    }
}

fn constants(component: &Component) -> HashMap<String, Dynamic> {
    let mut constants: HashMap<String, Dynamic> = component
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), scalar(v)))
        .collect();
    let all: Map = component
        .attributes
        .iter()
        .map(|(k, v)| (k.as_str().into(), scalar(v)))
        .collect();
    constants.insert("attributes".to_owned(), Dynamic::from_map(all));
    constants
}

fn number(value: &Dynamic) -> Option<f64> {
    value
        .as_float()
        .ok()
        .or_else(|| value.as_int().ok().map(|i| i as f64))
}

/// A model's return value: a number of seconds, or a map with `seconds` and optionally
/// `power` and `uncertainty`.
fn timed(value: &Dynamic) -> Option<Timed> {
    if let Some(seconds) = number(value) {
        return Some(Timed::bare(seconds));
    }
    let map = value.read_lock::<Map>()?;
    let optional = |key: &str| match map.get(key) {
        Some(x) if !x.is_unit() => number(x).map(Some),
        _ => Some(None),
    };
    Some(Timed {
        seconds: number(map.get("seconds")?)?,
        limiter: map
            .get("limiter")
            .and_then(|l| l.clone().try_cast::<rhai::ImmutableString>()),
        power: optional("power")?,
        uncertainty: optional("uncertainty")?,
        detail: None,
    })
}

/// The kernel a compute's parameters name: their `kernel`, else the kernel of their `launch`
/// (`kernel_params`'s key, `NAME|launch|trips`).
fn kernel_name(params: &Map) -> Option<ImmutableString> {
    let text = |key: &str| params.get(key)?.clone().try_cast::<ImmutableString>();
    text("kernel").or_else(|| {
        let launch = text("launch")?;
        let name = launch.split('|').next()?;
        Some(name.into())
    })
}

/// A compute span's detail: `model M, kernel K, limiter L`, with the parts that are known.
fn compute_detail(model: &str, kernel: Option<&str>, limiter: Option<&str>) -> Arc<str> {
    let mut detail = format!("model {model}");
    if let Some(kernel) = kernel {
        detail.push_str(&format!(", kernel {kernel}"));
    }
    if let Some(limiter) = limiter {
        detail.push_str(&format!(", limiter {limiter}"));
    }
    detail.into()
}

/// The memo key of `params`, or `None` when a value is not a scalar (not memoized).
fn memo_key(instance: usize, params: &Map) -> Option<MemoKey> {
    let values = params
        .iter()
        .map(|(k, v)| {
            let value = if let Ok(x) = v.as_float() {
                KeyValue::Number(x.to_bits())
            } else if let Ok(i) = v.as_int() {
                KeyValue::Number((i as f64).to_bits())
            } else if let Ok(b) = v.as_bool() {
                KeyValue::Bool(b)
            } else {
                KeyValue::Text(v.read_lock::<ImmutableString>()?.clone())
            };
            Some((k.to_string(), value))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(MemoKey::Params(instance, values))
}

impl Models {
    /// Compiles each distinct model source once and binds one instance to each distinct
    /// (model, component) pair, shared by every node or link using that pair.
    pub fn compile(
        system: &System,
        limits: &Limits,
        clock: &SliceClock,
        kernels: Rc<KernelLibrary>,
    ) -> Result<Self, ScriptError> {
        let mut engine = sandbox::engine(limits, clock);
        register_models(&mut engine);
        let current: Rc<RefCell<Rc<HashMap<String, Dynamic>>>> = Rc::default();
        register_teg(&mut engine, kernels, current.clone());
        let visible = current.clone();
        // Rhai marks on_var "volatile" (its signature may change), hence the allow: it is the
        // one hook that makes attributes plain constants inside functions, as in thesis
        // Figure 5.22; the Rhai version is pinned by Cargo.lock.
        #[allow(deprecated)]
        engine.on_var(move |name, _, _| Ok(visible.borrow().get(name).cloned()));
        let mut compiled: HashMap<String, Rc<AST>> = HashMap::new();
        let mut instances: Vec<Instance> = Vec::new();
        let mut bound: HashMap<(String, String), usize> = HashMap::new();
        let mut bind =
            |model: &ModelSource, component: &Component, function: &str| -> Result<usize, ScriptError> {
                let key = (model.name.clone(), component.name.clone());
                if let Some(&i) = bound.get(&key) {
                    return Ok(i);
                }
                let ast = match compiled.get(&model.name) {
                    Some(ast) => ast.clone(),
                    None => {
                        let ast = Rc::new(
                            engine
                                .compile(&model.source)
                                .map_err(|e| parse_error(&model.name, &model.source, e))?,
                        );
                        compiled.insert(model.name.clone(), ast.clone());
                        ast
                    }
                };
                if !ast
                    .iter_functions()
                    .any(|f| f.name == function && f.params.len() == 1)
                {
                    return Err(ScriptError::Other(format!(
                        "{}: defines no function {function}(params)",
                        model.name
                    )));
                }
                instances.push(Instance {
                    origin: Rc::from(model.name.as_str()),
                    ast,
                    constants: Rc::new(constants(component)),
                });
                bound.insert(key, instances.len() - 1);
                Ok(instances.len() - 1)
            };
        let nodes = system
            .nodes
            .iter()
            .map(|n| bind(&n.model, &n.component, "compute_time"))
            .collect::<Result<_, _>>()?;
        let links = system
            .links
            .iter()
            .map(|(l, _)| bind(&l.model, &l.component, "transfer_time"))
            .collect::<Result<_, _>>()?;
        Ok(Models {
            engine,
            current,
            instances,
            nodes,
            node_models: system
                .nodes
                .iter()
                .map(|n| Arc::from(n.spec.model.as_str()))
                .collect(),
            links,
            memo: RefCell::default(),
        })
    }

    fn memoized(&self, key: &Option<MemoKey>) -> Option<Timed> {
        key.as_ref().and_then(|k| self.memo.borrow().get(k).cloned())
    }

    fn remember(&self, key: Option<MemoKey>, timed: &Timed) {
        if let Some(key) = key {
            self.memo.borrow_mut().insert(key, timed.clone());
        }
    }

    fn call(&self, index: usize, function: &str, params: Map) -> Result<Timed, ScriptError> {
        let instance = &self.instances[index];
        *self.current.borrow_mut() = instance.constants.clone();
        let value: Dynamic = self
            .engine
            .call_fn(&mut Scope::new(), &instance.ast, function, (params,))
            .map_err(|e| located(&instance.origin, *e))?;
        let timed = timed(&value).ok_or_else(|| {
            format!(
                "{}: {function} returned {}, expected a number of seconds or #{{seconds, power, uncertainty}}",
                instance.origin,
                value.type_name()
            )
        })?;
        Ok(timed)
    }

    /// Each node's model as its system names it, by node index.
    pub fn node_models(&self) -> &[Arc<str>] {
        &self.node_models
    }

    /// `compute_time(params)` of node `node`'s model.
    pub fn compute_time(&self, node: usize, params: Map) -> Result<Timed, ScriptError> {
        let index = self.nodes[node];
        let key = memo_key(index, &params);
        if let Some(timed) = self.memoized(&key) {
            return Ok(timed);
        }
        let kernel = kernel_name(&params);
        let mut timed = self.call(index, "compute_time", params)?;
        let model = &self.node_models[node];
        timed.detail = Some(compute_detail(model, kernel.as_deref(), timed.limiter.as_deref()));
        self.remember(key, &timed);
        Ok(timed)
    }

    /// `transfer_time(#{size, direction, hostMemory})` of link `link`'s model.
    pub fn transfer_time(
        &self,
        link: usize,
        bytes: f64,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<Timed, ScriptError> {
        let index = self.links[link];
        let key = Some(MemoKey::Transfer(index, bytes.to_bits(), direction, host_memory));
        if let Some(timed) = self.memoized(&key) {
            return Ok(timed);
        }
        let mut params = Map::new();
        params.insert("size".into(), Dynamic::from_float(bytes));
        params.insert("direction".into(), Dynamic::from(direction.suffix()));
        params.insert("hostMemory".into(), Dynamic::from(host_memory.name()));
        let timed = self.call(index, "transfer_time", params)?;
        self.remember(key, &timed);
        Ok(timed)
    }
}

/// The engine's view of the links' models.
pub struct Timing(pub Rc<Models>);

impl LinkTiming for Timing {
    fn transfer_time(
        &mut self,
        link: LinkId,
        bytes: f64,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<Estimate, String> {
        let timed = self
            .0
            .transfer_time(link, bytes, direction, host_memory)
            .map_err(|e| e.to_string())?;
        Ok(Estimate {
            seconds: timed.seconds,
            uncertainty: timed.uncertainty_seconds(),
        })
    }
}

//! Computational models: Rhai sources whose `compute_time(params)` (nodes) and
//! `transfer_time(params)` (links) return seconds, with the component's attributes as
//! constants, plus `attributes`, the whole map of them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use hetsim_models::catalog::Component;
use hetsim_models::Scalar;
use hetsim_simulator::Direction;
use rhai::{Dynamic, Engine, Map, Scope, AST};

use crate::errors::{located, parse_error};
use crate::functions::register_models;
use crate::sandbox::{self, Limits, SliceClock};
use crate::system::{ModelSource, System};

/// A model attached to one node or link: its compiled source and its component's attributes.
pub struct Instance {
    origin: Rc<str>,
    ast: Rc<AST>,
    constants: Rc<HashMap<String, Dynamic>>,
}

/// Every computational model of a system, with the engine that evaluates them.
pub struct Models {
    engine: Engine,
    /// The attributes visible to the model being evaluated.
    current: Rc<RefCell<Rc<HashMap<String, Dynamic>>>>,
    nodes: Vec<Instance>,
    links: Vec<Instance>,
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

impl Models {
    /// Compiles each distinct model source once and binds it to every node and link using it.
    pub fn compile(system: &System, limits: &Limits, clock: &SliceClock) -> Result<Self, String> {
        let mut engine = sandbox::engine(limits, clock);
        register_models(&mut engine);
        let current: Rc<RefCell<Rc<HashMap<String, Dynamic>>>> = Rc::default();
        let visible = current.clone();
        // Rhai marks on_var "volatile" (its signature may change), hence the allow: it is the
        // one hook that makes attributes plain constants inside functions, as in thesis
        // Figure 5.22; the Rhai version is pinned by Cargo.lock.
        #[allow(deprecated)]
        engine.on_var(move |name, _, _| Ok(visible.borrow().get(name).cloned()));
        let mut compiled: HashMap<String, Rc<AST>> = HashMap::new();
        let mut instance =
            |model: &ModelSource, component: &Component, function: &str| -> Result<Instance, String> {
                let ast = match compiled.get(&model.name) {
                    Some(ast) => ast.clone(),
                    None => {
                        let ast = Rc::new(
                            engine
                                .compile(&model.source)
                                .map_err(|e| parse_error(&model.name, e))?,
                        );
                        compiled.insert(model.name.clone(), ast.clone());
                        ast
                    }
                };
                if !ast
                    .iter_functions()
                    .any(|f| f.name == function && f.params.len() == 1)
                {
                    return Err(format!("{}: defines no function {function}(params)", model.name));
                }
                Ok(Instance {
                    origin: Rc::from(model.name.as_str()),
                    ast,
                    constants: Rc::new(constants(component)),
                })
            };
        let nodes = system
            .nodes
            .iter()
            .map(|n| instance(&n.model, &n.component, "compute_time"))
            .collect::<Result<_, _>>()?;
        let links = system
            .links
            .iter()
            .map(|(l, _)| instance(&l.model, &l.component, "transfer_time"))
            .collect::<Result<_, _>>()?;
        Ok(Models {
            engine,
            current,
            nodes,
            links,
        })
    }

    fn call(&self, instance: &Instance, function: &str, params: Map) -> Result<f64, String> {
        *self.current.borrow_mut() = instance.constants.clone();
        let value: Dynamic = self
            .engine
            .call_fn(&mut Scope::new(), &instance.ast, function, (params,))
            .map_err(|e| located(&instance.origin, *e))?;
        value
            .as_float()
            .or_else(|_| value.as_int().map(|i| i as f64))
            .map_err(|t| {
                format!(
                    "{}: {function} returned {t}, expected a number of seconds",
                    instance.origin
                )
            })
    }

    /// `compute_time(params)` of node `node`'s model.
    pub fn compute_time(&self, node: usize, params: Map) -> Result<f64, String> {
        self.call(&self.nodes[node], "compute_time", params)
    }

    /// `transfer_time(#{size, direction})` of link `link`'s model.
    pub fn transfer_time(&self, link: usize, bytes: f64, direction: Direction) -> Result<f64, String> {
        let mut params = Map::new();
        params.insert("size".into(), Dynamic::from_float(bytes));
        params.insert("direction".into(), Dynamic::from(direction.suffix()));
        self.call(&self.links[link], "transfer_time", params)
    }
}

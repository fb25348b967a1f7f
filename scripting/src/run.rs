//! One simulation run: a system model, an application script, labels and variables.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use hetsim_models::catalog::{Component, ComponentKind};
use hetsim_simulator::collectives::Algorithm;
use hetsim_simulator::{
    place, simulate, Activity, Node, Options, Platform, Process, Request, Results, Resume, Routing, SimError,
};
use hetsim_system::{number_attribute, RoutingSpec, System, Variable, RESERVED_NAMES};
use rhai::{Dynamic, Map, Scope};
use serde::Serialize;

use crate::activities::Activities;
use crate::computational::{Models, Timing};
use crate::errors::{parse_error, ScriptError};
use crate::functions::register_models;
use crate::kernels::{self, KernelLibrary};
use crate::memory;
use crate::process::{Channel, RunLog, ScriptProcess};
use crate::resumable::{self, Names, ResumableProcess};
use crate::sandbox::{self, CancelFlag, Limits, SliceClock};
use crate::sim::{self, RunContext, Sim};
use crate::stack::SharedStack;

/// A variable's value as a script sees it.
fn dynamic(variable: &Variable) -> Dynamic {
    match variable {
        Variable::Int(i) => Dynamic::from_int(*i),
        Variable::Float(x) => Dynamic::from_float(*x),
        Variable::Bool(b) => Dynamic::from_bool(*b),
        Variable::Text(s) => Dynamic::from(s.clone()),
    }
}

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The engine's options: trace, progress.
    pub engine: Options,
    /// Algorithm of collectives that do not name one.
    pub algorithm: Algorithm,
    pub limits: Limits,
    /// Set from another thread to stop the run (it then fails with [`sandbox::CANCELLED`]).
    pub cancel: CancelFlag,
    pub interpreter: Interpreter,
}

/// How a run's scripts are run; the results are the same either way ([`crate::resumable`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interpreter {
    /// On the machine where the script keeps to what it runs, else on Rhai.
    #[default]
    Auto,
    /// On Rhai, each process on a coroutine (the tests compare the two).
    Rhai,
}

/// What a run produces: the engine's results and the run log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    #[serde(flatten)]
    pub results: Results,
    pub log: Vec<String>,
    pub log_dropped: u64,
    /// The computes and transfers by kind (see [`crate::activities`]).
    pub activities: Vec<Activity>,
}

/// The engine's platform of a resolved system.
pub fn platform(system: &System) -> Result<Platform, ScriptError> {
    let nodes = system
        .nodes
        .iter()
        .map(|n| Node {
            id: n.spec.id.clone(),
            kind: n.component.kind,
            count: n.spec.count,
            cores: number_attribute(&n.component, "cores").map(|c| c.clamp(1.0, f64::from(u32::MAX)) as u32),
            labels: n.spec.labels.clone(),
            power_load: number_attribute(&n.component, "powerConsumptionLoad").unwrap_or(0.0),
            power_idle: number_attribute(&n.component, "powerConsumptionIdle").unwrap_or(0.0),
            failure_rate: number_attribute(&n.component, "failureRate").unwrap_or(0.0),
            latency: crossing_latency(&n.component),
        })
        .collect();
    let links = system
        .links
        .iter()
        .enumerate()
        .map(|(number, (l, between))| l.engine_link(*between).map_err(|e| format!("link {number}: {e}")))
        .collect::<Result<_, String>>()?;
    let routing = match system.routing {
        RoutingSpec::Shortest => Routing::Shortest,
        RoutingSpec::Ecmp => Routing::Ecmp,
        RoutingSpec::Destination => Routing::Destination,
    };
    Ok(Platform::new(nodes, links)?
        .with_routing(routing)
        .with_routes(&system.routes)?)
}

/// What crossing a node costs a message: a switch's `latency` attribute [s]; nothing for
/// the other kinds, which end messages rather than forward them.
fn crossing_latency(component: &Component) -> f64 {
    match component.kind {
        ComponentKind::Switch => number_attribute(component, "latency").unwrap_or(0.0),
        _ => 0.0,
    }
}

/// The labels of a run: as asked, or, when none is asked, every label at its capacity.
pub fn default_labels(system: &System) -> BTreeMap<String, u64> {
    let mut labels = BTreeMap::new();
    for n in &system.nodes {
        for (label, multiplicity) in &n.spec.labels {
            *labels.entry(label.clone()).or_insert(0) += u64::from(*multiplicity) * u64::from(n.spec.count);
        }
    }
    labels
}

/// The run's labels: `given` counts, and the system's (see [`default_labels`]) for every
/// label not given, so that `--label Worker=4` changes the workers and keeps the master.
pub fn labels_over_defaults(system: &System, given: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut labels = default_labels(system);
    labels.extend(given.iter().map(|(k, &v)| (k.clone(), v)));
    labels
}

/// The engine application scripts run on: the sandbox, the model functions, the system's
/// kernels and `sim`.
fn app_engine(limits: &Limits, clock: &SliceClock, kernels: Rc<KernelLibrary>) -> rhai::Engine {
    let mut engine = sandbox::engine(limits, clock);
    register_models(&mut engine);
    kernels::register(&mut engine, kernels);
    sim::register(&mut engine);
    engine
}

/// An engine that parses application scripts as a run does, for checks before one.
pub(crate) fn parsing_engine() -> rhai::Engine {
    app_engine(
        &Limits::default(),
        &SliceClock::new(CancelFlag::default()),
        Rc::default(),
    )
}

/// Checks an application's syntax as a run would compile it; the error names the line.
pub fn check_app(app: &str, app_origin: &str) -> Result<(), ScriptError> {
    parsing_engine()
        .compile(app)
        .map(|_| ())
        .map_err(|e| parse_error(app_origin, app, e))
}

/// Checks that `labels` fit `system` (known labels, capacities).
pub fn check_labels(
    system: &System,
    labels: &BTreeMap<String, u64>,
    max_processes: u64,
) -> Result<(), ScriptError> {
    check_process_count(labels, max_processes)?;
    place(&platform(system)?, labels)?;
    Ok(())
}

/// Refuses more than `max_processes` processes in all (the sum checked, so that no count
/// overflows it).
pub fn check_process_count(labels: &BTreeMap<String, u64>, max_processes: u64) -> Result<(), ScriptError> {
    let total = labels
        .values()
        .try_fold(0u64, |sum, &n| sum.checked_add(n))
        .filter(|&total| total <= max_processes);
    match total {
        Some(_) => Ok(()),
        None => Err(ScriptError::Other(format!(
            "the labels ask for more than {max_processes} processes in all (limit max_processes)"
        ))),
    }
}

/// Processes up to which each has a stack of its own (`crate::stack`): such a run copies no
/// frames. A larger run puts all its processes on one stack, which stays in the CPU's
/// caches (spread over several stacks, the copies ran 40 % slower at 10⁵ processes).
const OWN_STACKS_UP_TO: usize = 64;

/// Processes placed between two checks of the run's memory budget and cancel flag: a
/// million processes are placed before any script runs.
const PLACED_BETWEEN_CHECKS: usize = 4096;

/// Runs `app` (Rhai source named `app_origin`) on `system`.
pub fn run(
    app: &str,
    app_origin: &str,
    system: &System,
    labels: &BTreeMap<String, u64>,
    variables: &BTreeMap<String, Variable>,
    options: &RunOptions,
) -> Result<RunReport, ScriptError> {
    let kernels = Rc::new(KernelLibrary::for_system(system)?);
    run_with_kernels(app, app_origin, system, labels, variables, options, kernels)
}

/// [`run`] with `kernels`, the library of `system`'s kernels ([`KernelLibrary::for_system`]),
/// kept by the caller: runs that share one analyse each launch once, and a caller that asked
/// the library to record reads which launches the application made.
pub fn run_with_kernels(
    app: &str,
    app_origin: &str,
    system: &System,
    labels: &BTreeMap<String, u64>,
    variables: &BTreeMap<String, Variable>,
    options: &RunOptions,
    kernels: Rc<KernelLibrary>,
) -> Result<RunReport, ScriptError> {
    if let Some(name) = variables.keys().find(|k| RESERVED_NAMES.contains(&k.as_str())) {
        return Err(ScriptError::Other(format!(
            "variable `{name}` shadows a name every script has ({})",
            RESERVED_NAMES.join(", ")
        )));
    }
    check_process_count(labels, options.limits.max_processes)?;
    let _budget = options.limits.max_run_memory.and_then(memory::Budget::start);
    let platform = platform(system)?;
    let placements = place(&platform, labels)?;
    let clock = SliceClock::new(options.cancel.clone());
    let models = Rc::new(Models::compile(system, &options.limits, &clock, kernels.clone())?);
    let log = Rc::new(RefCell::new(RunLog {
        limit: options.limits.max_log_lines,
        byte_limit: options.limits.max_log_bytes,
        ..RunLog::default()
    }));

    // Every label of the run, a label given 0 processes too: a script reads its count as 0
    // (a sweep over Worker=0,1,2 runs the master alone first) rather than finding no entry.
    let mut pids_by_label: BTreeMap<Arc<str>, Vec<usize>> = labels
        .keys()
        .map(|label| (Arc::from(label.as_str()), Vec::new()))
        .collect();
    for (pid, p) in placements.iter().enumerate() {
        pids_by_label.entry(p.label.clone()).or_default().push(pid);
    }
    let counts: Map = pids_by_label
        .iter()
        .map(|(l, pids)| (l.as_ref().into(), Dynamic::from_int(pids.len() as i64)))
        .collect();
    let mut engine = app_engine(&options.limits, &clock, kernels);
    engine.register_global_module(run_constants(counts.clone()).into());
    let printed = log.clone();
    engine.on_print(move |text| printed.borrow_mut().push(text.to_owned()));
    let ast = Rc::new(engine.compile(app).map_err(|e| parse_error(app_origin, app, e))?);
    let engine = Rc::new(engine);

    let context = Rc::new(RunContext {
        placements: placements.clone(),
        node_ids: system.nodes.iter().map(|n| n.spec.id.clone()).collect(),
        activities: Activities::default(),
        pids_by_label,
        models: models.clone(),
        log: log.clone(),
        algorithm: options.algorithm,
        topology: crate::nccl::Topology::of(system),
    });
    let origin: Rc<str> = Rc::from(app_origin);
    // The first script error of the run, with its place (the engine gets its text).
    let failure: Rc<RefCell<Option<ScriptError>>> = Rc::default();
    let program = match options.interpreter {
        Interpreter::Auto => resumable::compile(&ast, &names(variables, &counts)).ok(),
        Interpreter::Rhai => None,
    };
    let processes = match program {
        Some(program) => {
            let shared = Rc::new(resumable::Shared::new(
                program,
                &options.limits,
                clock.clone(),
                origin,
                failure.clone(),
            ));
            place_processes(&placements, &clock, |pid, tag, rank| {
                let sim = Sim::new(Channel::new(), context.clone(), pid);
                AppProcess::Resumable(ResumableProcess::new(shared.clone(), sim, tag, rank, pid))
            })?
        }
        None => {
            let template = Rc::new(scope_template(variables));
            let stack_count = if placements.len() <= OWN_STACKS_UP_TO {
                placements.len()
            } else {
                1
            };
            let stacks = (0..stack_count)
                .map(|_| SharedStack::new(options.limits.stack_size))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("cannot allocate the scripts' stacks: {e}"))?;
            place_processes(&placements, &clock, |pid, tag, rank| {
                let (context, template) = (context.clone(), template.clone());
                AppProcess::Coroutine(ScriptProcess::new(
                    engine.clone(),
                    ast.clone(),
                    origin.clone(),
                    stacks[pid % stacks.len()].clone(),
                    clock.clone(),
                    failure.clone(),
                    move |channel| process_scope(&template, tag, rank, pid, Sim::new(channel, context, pid)),
                ))
            })?
        }
    };
    let mut timing = Timing(models);
    let results = simulate(&platform, &placements, processes, &mut timing, &options.engine)
        .map_err(|error| with_script_error(error, failure.take()))?;
    let log = log.take();
    Ok(RunReport {
        results,
        log: log.lines,
        log_dropped: log.dropped,
        activities: context
            .activities
            .rows(&context.node_ids, context.models.node_models()),
    })
}

/// A process of a run: on a coroutine, or on the machine where its script allows
/// ([`crate::resumable`]).
pub enum AppProcess {
    Coroutine(ScriptProcess),
    Resumable(ResumableProcess),
}

impl Process for AppProcess {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        match self {
            AppProcess::Coroutine(p) => p.resume(now, input),
            AppProcess::Resumable(p) => p.resume(now, input),
        }
    }
}

/// Whether `app` runs on the machine ([`crate::resumable`]) in a run of these variables and
/// labels (each label's process count), or why not.
pub fn runs_on_machine(
    app: &str,
    variables: &BTreeMap<String, Variable>,
    labels: &BTreeMap<String, u64>,
) -> Result<(), String> {
    let ast = parsing_engine().compile(app).map_err(|e| e.to_string())?;
    let counts: Map = labels
        .iter()
        .map(|(label, &n)| (label.as_str().into(), Dynamic::from_int(n as i64)))
        .collect();
    resumable::compile(&ast, &names(variables, &counts)).map(|_| ())
}

/// What the machine's compiler knows of a run before it starts.
fn names<'a>(variables: &BTreeMap<String, Variable>, labels: &'a Map) -> Names<'a> {
    Names {
        variables: variables.iter().map(|(k, v)| (k.clone(), dynamic(v))).collect(),
        labels,
    }
}

/// Makes the run's processes, `make(pid, tag, rank)`, checking the run's cancel flag and
/// memory budget every [`PLACED_BETWEEN_CHECKS`].
fn place_processes(
    placements: &[hetsim_simulator::Placement],
    clock: &SliceClock,
    mut make: impl FnMut(usize, Dynamic, i64) -> AppProcess,
) -> Result<Vec<AppProcess>, ScriptError> {
    let mut processes = Vec::with_capacity(placements.len());
    let mut tags = Tags::default();
    for (pid, p) in placements.iter().enumerate() {
        if pid % PLACED_BETWEEN_CHECKS == 0 {
            if let Some(reason) = clock.stop_reason() {
                return Err(ScriptError::Other(reason));
            }
        }
        processes.push(make(pid, tags.of(&p.label), p.rank as i64));
    }
    Ok(processes)
}

/// The constants every process of a run reads and none has a copy of: `labels` (each label's
/// process count). A copy in each process's scope was 456 bytes a process (issue 46). A
/// script reads it as before, except that `is_def_var("labels")`, which looks in the scope
/// only, is false.
fn run_constants(counts: Map) -> rhai::Module {
    let mut constants = rhai::Module::new();
    constants.set_var("labels", counts);
    constants
}

/// The scope every process of a run starts from: `tag`, `rank`, `pid`, the run's variables
/// and `sim`, in that order, the per-process ones as placeholders (`labels` is one of the
/// [`run_constants`]). A process's scope is a clone ([`process_scope`]), so that the names
/// are shared, not allocated again for every process (issue 46).
fn scope_template(variables: &BTreeMap<String, Variable>) -> Scope<'static> {
    let mut scope = Scope::new();
    for name in ["tag", "rank", "pid"] {
        scope.push_dynamic(name, Dynamic::UNIT);
    }
    for (name, value) in variables {
        scope.push_constant_dynamic(name.as_str(), dynamic(value));
    }
    scope.push_dynamic("sim", Dynamic::UNIT);
    scope
}

/// The scope of the process `pid`: [`scope_template`]'s, with its own `tag`, `rank`, `pid`
/// (constants, as the template's others) and `sim`.
fn process_scope(template: &Scope<'static>, tag: Dynamic, rank: i64, pid: usize, sim: Sim) -> Scope<'static> {
    let mut scope = template.clone();
    let own = [
        ("tag", tag.into_read_only()),
        ("rank", Dynamic::from_int(rank).into_read_only()),
        ("pid", Dynamic::from_int(pid as i64).into_read_only()),
        ("sim", Dynamic::from(sim)),
    ];
    for (name, value) in own {
        if let Some(slot) = scope.get_mut(name) {
            *slot = value;
        }
    }
    scope
}

/// Each label's name as a script's string, made once per label and shared by its processes.
#[derive(Default)]
struct Tags(BTreeMap<Arc<str>, Dynamic>);

impl Tags {
    fn of(&mut self, label: &Arc<str>) -> Dynamic {
        self.0
            .entry(label.clone())
            .or_insert_with(|| Dynamic::from(label.to_string()))
            .clone()
    }
}

/// The engine's error, with the script's own when a process failed in its script.
fn with_script_error(error: SimError, failure: Option<ScriptError>) -> ScriptError {
    let script = match &error {
        SimError::Process { message, .. } => failure.filter(|f| f.to_string() == *message),
        _ => None,
    };
    ScriptError::Engine {
        error,
        script: script.map(Box::new),
    }
}

//! The `sim` object of application scripts: the primitives of docs/SIMULATION.md, each
//! suspending the script for as long as the engine says.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use hetsim_simulator::collectives::{Algorithm, Collective};
use hetsim_simulator::{Handle, Message, Placement, Request, Resume, Source};
use rhai::{Dynamic, Engine, EvalAltResult, Map};

use crate::activities::Activities;
use crate::computational::Models;
use crate::nccl::plans::Plans;
use crate::nccl::Topology;
use crate::process::{Channel, SharedLog};

type Fallible<T> = Result<T, Box<EvalAltResult>>;

mod arguments;
mod calls;
mod collective;
use arguments::{argument, checked, int, SendOptions};
pub use calls::{Answer, Method, Started};
pub use collective::{Progress, Steps};

/// What every process's `sim` reaches: the placement, the models and the log.
pub struct RunContext {
    pub placements: Vec<Placement>,
    /// Each node's id, by index.
    pub node_ids: Vec<String>,
    /// The run's computes and transfers by kind.
    pub activities: Activities,
    pub pids_by_label: BTreeMap<Arc<str>, Vec<usize>>,
    pub models: Rc<Models>,
    pub log: SharedLog,
    pub algorithm: Algorithm,
    /// The fabric NCCL's tuner reads (crate::nccl).
    pub topology: Topology,
}

impl RunContext {
    fn describe(&self, pid: usize) -> String {
        let p = &self.placements[pid];
        format!("{}[{}]", p.label, p.rank)
    }

    fn label(&self, label: &str, call: &str) -> Fallible<&[usize]> {
        self.pids_by_label.get(label).map(Vec::as_slice).ok_or_else(|| {
            let known: Vec<&str> = self.pids_by_label.keys().map(|l| &**l).collect();
            format!(
                "{call}: no process has label `{label}` (labels in this run: {})",
                known.join(", ")
            )
            .into()
        })
    }

    /// A label with one process, a `[label, rank]` pair, or a pid.
    fn target(&self, target: &Dynamic, call: &str) -> Fallible<usize> {
        if let Some(pid) = int(target) {
            return usize::try_from(pid)
                .ok()
                .filter(|&p| p < self.placements.len())
                .ok_or_else(|| format!("{call}: pid {pid} is not in 0..{}", self.placements.len()).into());
        }
        if let Some(label) = target.read_lock::<rhai::ImmutableString>() {
            let label = label.as_str();
            let pids = self.label(label, call)?;
            return match pids {
                [pid] => Ok(*pid),
                _ => Err(format!(
                    "{call}: label `{label}` has {} processes; name one as [\"{label}\", rank] or by pid",
                    pids.len()
                )
                .into()),
            };
        }
        if let Some(pair) = target.read_lock::<rhai::Array>() {
            if let [label, rank] = pair.as_slice() {
                if let (Some(label), Some(rank)) = (label.read_lock::<rhai::ImmutableString>(), int(rank)) {
                    let label = label.as_str();
                    let pids = self.label(label, call)?;
                    return usize::try_from(rank)
                        .ok()
                        .and_then(|r| pids.get(r).copied())
                        .ok_or_else(|| {
                            format!("{call}: label `{label}` has ranks 0..{}, not {rank}", pids.len()).into()
                        });
                }
            }
        }
        Err(format!(
            "{call}: expected a label, a [label, rank] pair or a pid, got {}",
            target.type_name()
        )
        .into())
    }
}

/// One process's handle on the simulator.
#[derive(Clone)]
pub struct Sim {
    pub channel: Rc<Channel>,
    pub context: Rc<RunContext>,
    pub pid: usize,
    /// This process's plans of its collective calls, held in the `sim` value itself rather
    /// than behind a shared pointer (an allocation of about 80 bytes for each of a run's
    /// processes, issue 46); a copy of `sim` a script makes starts from a copy of them.
    pub plans: Plans,
}

impl Sim {
    pub fn new(channel: Rc<Channel>, context: Rc<RunContext>, pid: usize) -> Self {
        Sim {
            channel,
            context,
            pid,
            plans: Plans::default(),
        }
    }

    fn now(&self) -> f64 {
        self.channel.now.get()
    }

    fn done(&self, resume: Resume, call: &str) -> Fallible<()> {
        match resume {
            Resume::Done => Ok(()),
            other => Err(unexpected(other, call)),
        }
    }

    /// Appends `value` to the run log, with the time and the process.
    fn log(&self, value: &Dynamic) {
        let line = format!(
            "[{:.9} s] {}: {value}",
            self.now(),
            self.context.describe(self.pid)
        );
        self.context.log.borrow_mut().push(line);
    }

    fn isend(&mut self, bytes: f64, to: usize, options: SendOptions) -> Fallible<Handle> {
        let resume = self.channel.request(send_request(to, bytes, options, true)?);
        handle_of(resume, "sim.isend")
    }

    fn received(&self, m: Message) -> Received {
        let sender = &self.context.placements[m.from];
        let here = self.context.placements[self.pid].node;
        self.context
            .activities
            .transfer(sender.node, here, m.bytes, m.arrived - m.sent);
        Received {
            from: m.from as i64,
            from_label: sender.label.clone(),
            from_rank: sender.rank as i64,
            bytes: m.bytes,
            sent: m.sent,
            arrived: m.arrived,
        }
    }

    /// `sim.receive`'s value from the engine's answer.
    fn message(&self, resume: Resume) -> Fallible<Received> {
        match resume {
            Resume::Message(m) => Ok(self.received(m)),
            other => Err(format!("sim.receive: the engine answered {other:?}").into()),
        }
    }

    fn irecv(&mut self, from: Source) -> Fallible<Handle> {
        let resume = self.channel.request(Request::Post { from });
        handle_of(resume, "sim.irecv")
    }

    /// Waits for `handles`: per handle, a receive's message, or () for a send.
    fn wait_all(&mut self, handles: Vec<Handle>, call: &str) -> Fallible<Vec<Dynamic>> {
        let resume = self.channel.request(Request::Wait { handles });
        self.completed(resume, call)
    }

    /// The values of a wait's handles from the engine's answer to it.
    fn completed(&self, resume: Resume, call: &str) -> Fallible<Vec<Dynamic>> {
        match resume {
            Resume::Completed(messages) => Ok(messages
                .into_iter()
                .map(|m| m.map_or(Dynamic::UNIT, |m| Dynamic::from(self.received(m))))
                .collect()),
            other => Err(format!("{call}: the engine answered {other:?}").into()),
        }
    }

    fn test(&mut self, handle: Handle) -> Fallible<bool> {
        match self.channel.request(Request::Test { handle }) {
            Resume::Tested(done) => Ok(done),
            other => Err(format!("sim.test: the engine answered {other:?}").into()),
        }
    }
}

/// What `sim.receive` returns: `m.from` (pid), `m.from_label`, `m.from_rank`, `m.bytes`,
/// `m.sent`, `m.arrived` [s]. A small type with getters rather than an object map: one is
/// made for every message.
#[derive(Clone, Debug)]
pub struct Received {
    from: i64,
    from_label: Arc<str>,
    from_rank: i64,
    bytes: f64,
    sent: f64,
    arrived: f64,
}

impl Received {
    /// The names of [`Received::field`].
    pub const FIELDS: [&'static str; 6] = ["from", "from_label", "from_rank", "bytes", "sent", "arrived"];

    /// The field `name` as a script reads it (`m.bytes`).
    pub fn field(&self, name: &str) -> Option<Dynamic> {
        Some(match name {
            "from" => Dynamic::from_int(self.from),
            "from_label" => Dynamic::from(self.from_label.to_string()),
            "from_rank" => Dynamic::from_int(self.from_rank),
            "bytes" => Dynamic::from_float(self.bytes),
            "sent" => Dynamic::from_float(self.sent),
            "arrived" => Dynamic::from_float(self.arrived),
            _ => return None,
        })
    }
}

impl std::fmt::Display for Received {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "#{{from: {}, from_label: \"{}\", from_rank: {}, bytes: {}, sent: {}, arrived: {}}}",
            self.from, self.from_label, self.from_rank, self.bytes, self.sent, self.arrived
        )
    }
}

fn handle_of(resume: Resume, call: &str) -> Fallible<Handle> {
    match resume {
        Resume::Handle(h) => Ok(h),
        other => Err(unexpected(other, call)),
    }
}

/// The script's error for an answer `call` does not expect: a refusal as the engine gives its
/// reason (the script fails at the call's line), anything else as a bug report.
fn unexpected(resume: Resume, call: &str) -> Box<EvalAltResult> {
    match resume {
        Resume::Refused(why) => format!("{call}: {why}").into(),
        other => format!("{call}: the engine answered {other:?}").into(),
    }
}

/// A message's request, its size checked as `sim.send`'s, or as `sim.isend`'s where the sender
/// waits for it (`tracked`); a collective's sends are checked so too.
fn send_request(to: usize, bytes: f64, options: SendOptions, tracked: bool) -> Fallible<Request> {
    let what = if tracked {
        "sim.isend: a message size [bytes]"
    } else {
        "sim.send: a message size [bytes]"
    };
    checked(bytes, what)?;
    Ok(Request::Send {
        to,
        bytes,
        direction: options.direction,
        host_memory: options.host_memory,
        tracked,
    })
}

/// `sim.sleep`'s request for `seconds` (checked).
fn sleep_request(seconds: f64) -> Fallible<Request> {
    checked(seconds, "sim.sleep: a duration [s]")?;
    Ok(Request::Sleep { seconds })
}

/// A message's size and its receiver's pid, from the arguments of `call`.
fn message_to(s: &Sim, bytes: &Dynamic, target: &Dynamic, call: &str) -> Fallible<(f64, usize)> {
    Ok((argument(bytes, call, ": bytes")?, s.context.target(target, call)?))
}

/// The handles in `items`, or which element is not one.
fn handles(items: rhai::Array, call: &str) -> Fallible<Vec<Handle>> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let type_name = item.type_name();
            item.try_cast::<Handle>().ok_or_else(|| {
                format!("{call}: element {i}: expected a handle from sim.isend or sim.irecv, got {type_name}")
                    .into()
            })
        })
        .collect()
}

/// `"any"`, or a process target (pid, label, [label, rank]).
fn source(s: &Sim, source: &Dynamic, call: &str) -> Fallible<Source> {
    if source
        .clone()
        .try_cast::<rhai::ImmutableString>()
        .is_some_and(|t| t == "any")
    {
        Ok(Source::Any)
    } else {
        Ok(Source::Pid(s.context.target(source, call)?))
    }
}

fn register_nonblocking(engine: &mut Engine) {
    engine.register_type_with_name::<Handle>("Handle");
    engine.register_fn("isend", |s: &mut Sim, bytes: Dynamic, target: Dynamic| {
        let (bytes, to) = message_to(s, &bytes, &target, "sim.isend")?;
        s.isend(bytes, to, SendOptions::default())
    });
    engine.register_fn(
        "isend",
        |s: &mut Sim, bytes: Dynamic, target: Dynamic, options: Map| {
            let (bytes, to) = message_to(s, &bytes, &target, "sim.isend")?;
            let options = SendOptions::default().read(&options)?;
            s.isend(bytes, to, options)
        },
    );
    engine.register_fn("irecv", |s: &mut Sim, from: Dynamic| {
        let from = source(s, &from, "sim.irecv")?;
        s.irecv(from)
    });
    engine.register_fn("wait", |s: &mut Sim, handle: Handle| {
        let mut got = s.wait_all(vec![handle], "sim.wait")?;
        Ok::<_, Box<rhai::EvalAltResult>>(got.pop().unwrap_or(Dynamic::UNIT))
    });
    engine.register_fn("wait_all", |s: &mut Sim, items: rhai::Array| {
        let handles = handles(items, "sim.wait_all")?;
        s.wait_all(handles, "sim.wait_all")
    });
    engine.register_fn("test", |s: &mut Sim, handle: Handle| s.test(handle));
}

fn register_received(engine: &mut Engine) {
    engine.register_type_with_name::<Received>("Message");
    for name in Received::FIELDS {
        engine.register_get(name, move |m: &mut Received| {
            m.field(name).unwrap_or(Dynamic::UNIT)
        });
    }
    engine.register_fn("to_string", |m: &mut Received| m.to_string());
    engine.register_fn("to_debug", |m: &mut Received| m.to_string());
}

/// The collectives a script calls as `sim.<name>(bytes[, options])` (and `sim.barrier`).
pub const COLLECTIVES: [(&str, Collective); 8] = [
    ("broadcast", Collective::Broadcast),
    ("scatter", Collective::Scatter),
    ("gather", Collective::Gather),
    ("reduce", Collective::Reduce),
    ("allreduce", Collective::Allreduce),
    ("allgather", Collective::Allgather),
    ("alltoall", Collective::Alltoall),
    ("reducescatter", Collective::ReduceScatter),
];

/// Registers the type `Sim` and its methods on the application engine.
pub fn register(engine: &mut Engine) {
    register_received(engine);
    register_nonblocking(engine);
    engine.register_type_with_name::<Sim>("Sim");
    engine.register_fn("now", |s: &mut Sim| s.now());
    engine.register_fn("compute", |s: &mut Sim, params: Map| {
        s.blocking(Method::ComputeModel, &mut [Dynamic::from_map(params)])
    });
    engine.register_fn("compute", |s: &mut Sim, seconds: f64| {
        s.blocking(Method::ComputeSeconds, &mut [Dynamic::from_float(seconds)])
    });
    engine.register_fn("compute", |s: &mut Sim, seconds: i64| {
        s.blocking(Method::ComputeSeconds, &mut [Dynamic::from_int(seconds)])
    });
    engine.register_fn("sleep", |s: &mut Sim, seconds: Dynamic| {
        s.blocking(Method::Sleep, &mut [seconds])
    });
    engine.register_fn("send", |s: &mut Sim, bytes: Dynamic, target: Dynamic| {
        s.blocking(Method::Send, &mut [bytes, target])
    });
    // The third argument is a direction or an options map.
    engine.register_fn(
        "send",
        |s: &mut Sim, bytes: Dynamic, target: Dynamic, third: Dynamic| {
            s.blocking(Method::SendWith, &mut [bytes, target, third])
        },
    );
    engine.register_fn(
        "send",
        |s: &mut Sim, bytes: Dynamic, target: Dynamic, way: Dynamic, options: Dynamic| {
            s.blocking(Method::SendWayWith, &mut [bytes, target, way, options])
        },
    );
    engine.register_fn("receive", |s: &mut Sim, from: Dynamic| {
        s.blocking(Method::Receive, &mut [from])
    });
    engine.register_fn("log", |s: &mut Sim, value: Dynamic| s.log(&value));
    for (name, collective) in COLLECTIVES {
        let method = Method::Collective(collective);
        engine.register_fn(name, move |s: &mut Sim, bytes: Dynamic| {
            s.blocking(method, &mut [bytes])
        });
        engine.register_fn(name, move |s: &mut Sim, bytes: Dynamic, options: Map| {
            s.blocking(method, &mut [bytes, Dynamic::from_map(options)])
        });
    }
    let barrier = Method::Collective(Collective::Barrier);
    engine.register_fn("barrier", move |s: &mut Sim| s.blocking(barrier, &mut []));
    engine.register_fn("barrier", move |s: &mut Sim, options: Map| {
        s.blocking(barrier, &mut [Dynamic::from_map(options)])
    });
}

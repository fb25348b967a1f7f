//! A collective call (`sim.allreduce` and the others) as a sequence of requests that can
//! stop at any of them: a process on a coroutine runs it to the end in one call, suspended
//! at each request ([`Sim::blocking`]), and a process on the machine ([`crate::resumable`])
//! keeps the [`Steps`] while it waits.

use std::rc::Rc;

use hetsim_simulator::collectives::{Collective, Step};
use hetsim_simulator::{Handle, Request, Resume, Source, SpanKind};
use rhai::Map;

use super::arguments::{checked, text, SendOptions};
use super::{handle_of, send_request, sleep_request, unexpected, Fallible, Sim};
use crate::nccl;
use crate::nccl::plans::{self, Call, Group, Planned};

/// A process's part of one collective call under way.
pub struct Steps {
    collective: Collective,
    bytes: f64,
    start: f64,
    planned: Rc<Planned>,
    /// Whether the plan waits for its sends (it has a [`Step::Flush`]).
    tracked: bool,
    /// The next step to run.
    next: usize,
    pending: Vec<Handle>,
    awaiting: Awaiting,
}

/// What the request last made waits for, and how its answer is read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Awaiting {
    Nothing,
    Done(&'static str),
    Handle,
    Message,
    Completed,
    /// The call's span, after its last step: then the call is done.
    Mark,
}

/// What a call does next: wait on a request, or return its time.
pub enum Progress {
    Wait(Request),
    Done(f64),
}

impl Sim {
    /// Checks and plans this process's part of `collective`; options: `label` (default: own
    /// label; "all" for every process), `root` (rank, default 0), `algorithm` (flat,
    /// binomial, ring, tree, nvls, nvlstree, collnetdirect or nccl: the run's default,
    /// NCCL's pick) and `protocol` (LL, LL128, Simple). `ring` without a protocol is the plain
    /// ring of message steps (no protocol costs); with one, and `tree`, `nvls`, `nvlstree`
    /// and `nccl`, the call runs as NCCL would ([`crate::nccl`]). A call is planned once per
    /// process and reused while it repeats ([`plans`]).
    pub(super) fn collective(
        &mut self,
        collective: Collective,
        bytes: f64,
        options: &Map,
    ) -> Fallible<Steps> {
        let call = format!("sim.{collective}");
        checked(bytes, &format!("{call}: a message size [bytes]"))?;
        for (key, _) in options.iter() {
            if !["label", "root", "algorithm", "protocol"].contains(&key.as_str()) {
                return Err(
                    format!("{call}: unknown option `{key}` (label, root, algorithm, protocol)").into(),
                );
            }
        }
        let start = self.now();
        let own = self.context.placements[self.pid].label.clone();
        let label = match options.get("label") {
            Some(l) => text(l, &format!("{call}: option `label`"))?,
            None => own.to_string(),
        };
        let all: Vec<usize>;
        let members: &[usize] = if label == "all" {
            all = (0..self.context.placements.len()).collect();
            &all
        } else {
            self.context.label(&label, &call)?
        };
        let me = members.iter().position(|&p| p == self.pid).ok_or_else(|| {
            format!(
                "{call}: this process ({}) is not among label `{label}`",
                self.context.describe(self.pid)
            )
        })?;
        let root = match options.get("root") {
            Some(r) => r
                .as_int()
                .map_err(|t| format!("{call}: option `root`: expected a rank, got {t}"))?,
            None => 0,
        };
        let root = usize::try_from(root)
            .ok()
            .filter(|&r| r < members.len())
            .ok_or_else(|| {
                format!(
                    "{call}: root {root} is not a rank of `{label}` (0..{})",
                    members.len()
                )
            })?;
        let choice = nccl::choice(options, self.context.algorithm, collective, &call)?;
        let group = if label == "all" {
            Group::All
        } else {
            Group::listed(members)
        };
        let key = Call::new(collective, group, root, me, bytes, choice);
        let context = &self.context;
        let planned = self.plans.get_or_plan(key, || {
            plans::plan(&key, members, |p| context.placements[p].node, &context.topology)
                .map_err(|e| format!("{call}: {e}"))
        })?;
        Ok(Steps {
            collective,
            bytes,
            start,
            tracked: planned.steps.contains(&Step::Flush),
            planned,
            next: 0,
            pending: Vec::new(),
            awaiting: Awaiting::Nothing,
        })
    }

    /// Reads `resume`, the answer to the request `steps` made last (none at the start), and
    /// runs the steps to the next request: sends (tracked where the plan waits for them),
    /// receives, delays, waits; then the call's span, and its time.
    pub fn advance(&mut self, steps: &mut Steps, resume: Option<Resume>) -> Fallible<Progress> {
        if let Some(resume) = resume {
            match std::mem::replace(&mut steps.awaiting, Awaiting::Nothing) {
                Awaiting::Nothing => {}
                Awaiting::Done(call) => self.done(resume, call)?,
                Awaiting::Handle => steps.pending.push(handle_of(resume, "sim.isend")?),
                Awaiting::Message => {
                    self.message(resume)?;
                }
                Awaiting::Completed => {
                    self.completed(resume, "sim.collective")?;
                }
                Awaiting::Mark => {
                    return match resume {
                        Resume::Done => Ok(Progress::Done(self.now() - steps.start)),
                        other => Err(unexpected(other, &format!("sim.{}", steps.collective))),
                    };
                }
            }
        }
        while let Some(&step) = steps.planned.steps.get(steps.next) {
            steps.next += 1;
            let (request, awaiting) = match step {
                Step::Send { to, bytes } if steps.tracked => (
                    send_request(to, bytes, SendOptions::default(), true)?,
                    Awaiting::Handle,
                ),
                Step::Send { to, bytes } => (
                    send_request(to, bytes, SendOptions::default(), false)?,
                    Awaiting::Done("sim.send"),
                ),
                Step::Receive { from } => (
                    Request::Receive {
                        from: Source::Pid(from),
                    },
                    Awaiting::Message,
                ),
                Step::Delay { seconds } if seconds > 0.0 => {
                    (sleep_request(seconds)?, Awaiting::Done("sim.sleep"))
                }
                Step::Delay { .. } => continue,
                Step::Flush if steps.pending.is_empty() => continue,
                Step::Flush => (wait(&mut steps.pending), Awaiting::Completed),
            };
            steps.awaiting = awaiting;
            return Ok(Progress::Wait(request));
        }
        if !steps.pending.is_empty() {
            steps.awaiting = Awaiting::Completed;
            return Ok(Progress::Wait(wait(&mut steps.pending)));
        }
        steps.awaiting = Awaiting::Mark;
        let (collective, how, bytes) = (steps.collective, &steps.planned.how, steps.bytes);
        Ok(Progress::Wait(Request::Mark {
            kind: SpanKind::Collective,
            start: steps.start,
            detail: format!("{collective} {how} {bytes} bytes"),
        }))
    }
}

fn wait(pending: &mut Vec<Handle>) -> Request {
    Request::Wait {
        handles: std::mem::take(pending),
    }
}

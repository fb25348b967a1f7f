//! The `sim` methods that a script calls most, each in two halves: what the engine is asked
//! ([`Sim::start`]) and how its answer becomes the script's value ([`Sim::answer`]). A script
//! on a coroutine ([`crate::process`]) runs both halves in one call, suspended in between; a
//! resumable program ([`crate::resumable`]) returns the request to the engine and takes the
//! answer when it is resumed. One definition of each method serves both, so that they cannot
//! drift apart (issue 46).

use hetsim_simulator::collectives::Collective;
use hetsim_simulator::{Request, Resume, Source};
use rhai::{Dynamic, Map};

use super::arguments::{argument, checked, direction, number, SendOptions};
use super::collective::{Progress, Steps};
use super::{message_to, send_request, sleep_request, source, Fallible, Sim};
use crate::computational::Timed;

/// A `sim` method by its overload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `sim.now()`.
    Now,
    /// `sim.log(value)`.
    Log,
    /// `sim.send(bytes, target)`.
    Send,
    /// `sim.send(bytes, target, direction or options)`.
    SendWith,
    /// `sim.send(bytes, target, direction, options)`.
    SendWayWith,
    /// `sim.receive(source)`.
    Receive,
    /// `sim.compute(#{ … })`: a computational model's parameters.
    ComputeModel,
    /// `sim.compute(seconds)`, a float or an integer.
    ComputeSeconds,
    /// `sim.sleep(seconds)`.
    Sleep,
    /// `sim.allreduce(bytes)`, `sim.allreduce(bytes, options)` and the other collectives;
    /// `sim.barrier()`, `sim.barrier(options)`.
    Collective(Collective),
}

/// What a method does at once: its value, a request the script waits on, or a collective's
/// steps, which wait on several.
pub enum Started {
    Value(Dynamic),
    Wait(Request, Answer),
    Steps(Box<Steps>),
}

/// How the engine's answer to a request becomes the value of the call that made it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// `()`, once the engine says done; the call's name for any other answer.
    Done(&'static str),
    /// The seconds computed, once done.
    Seconds(f64),
    /// The message received.
    Message,
}

impl Sim {
    /// Starts `method` on `args` (as many as the overload takes, of the types it takes).
    pub fn start(&mut self, method: Method, args: &mut [Dynamic]) -> Fallible<Started> {
        let taken = |i: usize, args: &mut [Dynamic]| std::mem::take(&mut args[i]);
        Ok(match method {
            Method::Now => Started::Value(Dynamic::from_float(self.now())),
            Method::Log => {
                self.log(&args[0]);
                Started::Value(Dynamic::UNIT)
            }
            Method::Send => self.send_call(&args[0], &args[1], || Ok(SendOptions::default()))?,
            Method::SendWith => {
                let third = taken(2, args);
                self.send_call(&args[0], &args[1], || match third.read_lock::<Map>() {
                    Some(map) => SendOptions::default().read(&map),
                    None => Ok(SendOptions {
                        direction: Some(direction(&third, "sim.send: direction")?),
                        ..SendOptions::default()
                    }),
                })?
            }
            Method::SendWayWith => {
                let (way, options) = (taken(2, args), taken(3, args));
                self.send_call(&args[0], &args[1], || {
                    let map = options.read_lock::<Map>().ok_or_else(|| {
                        format!(
                            "sim.send: options: expected a map such as #{{ hostMemory: \"pinned\" }}, got {}",
                            options.type_name()
                        )
                    })?;
                    SendOptions {
                        direction: Some(direction(&way, "sim.send: direction")?),
                        ..SendOptions::default()
                    }
                    .read(&map)
                })?
            }
            Method::Receive => {
                let from: Source = source(self, &args[0], "sim.receive")?;
                Started::Wait(Request::Receive { from }, Answer::Message)
            }
            Method::ComputeModel => {
                let params = taken(0, args).cast::<Map>();
                let node = self.context.placements[self.pid].node;
                let timed = self
                    .context
                    .models
                    .compute_time(node, params)
                    .map_err(|e| e.to_string())?;
                self.compute_started(timed, "sim.compute: the model's time [s]")?
            }
            Method::ComputeSeconds => {
                let seconds = number(&args[0], "sim.compute")?;
                self.compute_started(Timed::bare(seconds), "sim.compute: a duration [s]")?
            }
            Method::Sleep => {
                let seconds = number(&args[0], "sim.sleep")?;
                Started::Wait(sleep_request(seconds)?, Answer::Done("sim.sleep"))
            }
            Method::Collective(Collective::Barrier) => {
                let options = args.first_mut().map(|o| std::mem::take(o).cast::<Map>());
                Started::Steps(Box::new(self.collective(
                    Collective::Barrier,
                    0.0,
                    &options.unwrap_or_default(),
                )?))
            }
            Method::Collective(collective) => {
                let bytes = argument(&args[0], &format!("sim.{collective}"), ": bytes")?;
                let options = args.get_mut(1).map(|o| std::mem::take(o).cast::<Map>());
                Started::Steps(Box::new(self.collective(
                    collective,
                    bytes,
                    &options.unwrap_or_default(),
                )?))
            }
        })
    }

    /// The value of the call that asked what `answer` describes, from the engine's `resume`.
    pub fn answer(&self, answer: Answer, resume: Resume) -> Fallible<Dynamic> {
        match answer {
            Answer::Done(call) => self.done(resume, call).map(|()| Dynamic::UNIT),
            Answer::Seconds(seconds) => self
                .done(resume, "sim.compute")
                .map(|()| Dynamic::from_float(seconds)),
            Answer::Message => self.message(resume).map(Dynamic::from),
        }
    }

    /// Both halves of `method` on the process's coroutine, suspended in between.
    pub(super) fn blocking(&mut self, method: Method, args: &mut [Dynamic]) -> Fallible<Dynamic> {
        match self.start(method, args)? {
            Started::Value(value) => Ok(value),
            Started::Wait(request, answer) => {
                let resume = self.channel.request(request);
                self.answer(answer, resume)
            }
            Started::Steps(mut steps) => {
                let mut resume = None;
                loop {
                    match self.advance(&mut steps, resume.take())? {
                        Progress::Wait(request) => resume = Some(self.channel.request(request)),
                        Progress::Done(seconds) => return Ok(Dynamic::from_float(seconds)),
                    }
                }
            }
        }
    }

    /// `sim.send` to the target in its arguments, its options read after the target (so an
    /// error names the target first, as it always has).
    fn send_call(
        &mut self,
        bytes: &Dynamic,
        target: &Dynamic,
        options: impl FnOnce() -> Fallible<SendOptions>,
    ) -> Fallible<Started> {
        let (bytes, to) = message_to(self, bytes, target, "sim.send")?;
        let request = send_request(to, bytes, options()?, false)?;
        Ok(Started::Wait(request, Answer::Done("sim.send")))
    }

    /// `sim.compute` for `timed` (checked, its seconds named `what` in an error; counted among
    /// the run's activities): the request, and the seconds the call returns.
    fn compute_started(&mut self, timed: Timed, what: &str) -> Fallible<Started> {
        checked(timed.seconds, what)?;
        let node = self.context.placements[self.pid].node;
        self.context
            .activities
            .compute(node, timed.limiter.clone(), timed.seconds);
        let request = Request::Compute {
            seconds: timed.seconds,
            power: timed.power,
            uncertainty: timed.uncertainty_seconds(),
            detail: timed.detail,
        };
        Ok(Started::Wait(request, Answer::Seconds(timed.seconds)))
    }
}

//! A compiled application script as a flat list of operations on a value stack, and the
//! machine that runs one process's copy of it until a `sim` call waits on the engine.

use std::fmt::Write;

use hetsim_simulator::{Request, Resume};
use rhai::{Dynamic, EvalAltResult, Identifier, ImmutableString, Map, Position};

use super::operators::{negate, Operator};
use crate::sim::{Answer, Method, Progress, Received, Sim, Started, Steps};

/// A process's variable by its place in [`Machine::slots`].
pub type Slot = u16;

/// One operation. Jumps name an index into [`Program::code`].
#[derive(Clone, Debug)]
pub enum Op {
    /// Pushes a value.
    Const(Dynamic),
    /// Pushes a copy of a variable.
    Load(Slot),
    /// Pops a value into a variable.
    Store(Slot),
    Pop,
    Jump(usize),
    /// Jumps back to a loop's head; `at` is the loop's place, where a script stopped by the
    /// sandbox inside the loop is said to be.
    Repeat {
        to: usize,
        at: Position,
    },
    /// Pops a boolean; jumps when it is false.
    JumpUnless(usize),
    /// Pops the right and the left operand (of types the operator takes, checked when
    /// compiled) and pushes the result; `at` is the operator's place.
    Binary {
        operator: Operator,
        at: Position,
    },
    /// Pops a number, pushes its negation.
    Negate {
        at: Position,
    },
    /// Pops a boolean, pushes its negation.
    Not,
    /// Pops a message (`sim.receive`'s value), pushes its field of this name.
    Field(&'static str),
    /// Pops a range's end and start (integers) into `counter` and the slot after it.
    RangeStart {
        counter: Slot,
        inclusive: bool,
    },
    /// Puts the range's next value in `var`, or jumps to `exit` once it is done.
    RangeNext {
        counter: Slot,
        var: Slot,
        exit: usize,
    },
    /// Pops the arguments and calls a `sim` method; `at` is where the script calls it.
    Call {
        method: Method,
        args: u8,
        at: Position,
    },
    /// Pops the parts of an interpolated string (texts, numbers, booleans) and pushes the
    /// text, each checked against the size limit as Rhai checks it, at its part's place.
    Concat {
        parts: Box<[Position]>,
    },
    /// Pops the items of an array literal (texts, numbers, booleans), checked as above.
    Array {
        items: Box<[Position]>,
    },
    /// Pops the values of a map literal, one per key, in the keys' order.
    Map {
        keys: Box<[(Identifier, Position)]>,
        template: Box<Map>,
    },
    /// Ends the script.
    End,
}

/// A compiled script: its operations and how many variables a process needs.
#[derive(Debug)]
pub struct Program {
    pub code: Vec<Op>,
    pub slots: usize,
}

/// The sandbox's size limits, as Rhai applies them to the values a script builds.
#[derive(Clone, Copy, Debug)]
pub struct SizeLimits {
    pub string: usize,
    pub array: usize,
    pub map: usize,
}

impl SizeLimits {
    /// Rhai's `throw_on_size`: (array items, map entries, text bytes) against the limits,
    /// the error placed at `at`.
    fn check(
        &self,
        (items, entries, bytes): (usize, usize, usize),
        at: Position,
    ) -> Result<(), Box<EvalAltResult>> {
        let over = |what: &str| Err(EvalAltResult::ErrorDataTooLarge(what.to_owned(), at).into());
        if self.string > 0 && bytes > self.string {
            return over("Length of string");
        }
        if self.array > 0 && items > self.array {
            return over("Size of array/BLOB");
        }
        if self.map > 0 && entries > self.map {
            return over("Size of object map");
        }
        Ok(())
    }
}

/// Where a process stands in its program: the next operation, its operands and variables.
pub struct Machine {
    pub pc: usize,
    pub stack: Vec<Dynamic>,
    pub slots: Box<[Dynamic]>,
}

/// Why [`Machine::run`] returned.
pub enum Stop {
    /// A `sim` call waits on the engine: its request, what waits for the answer, and where.
    Wait(Request, Waiting, Position),
    End,
}

/// What reads the engine's answer to a waiting `sim` call.
pub enum Waiting {
    /// A call of one request.
    Answer(Answer),
    /// A collective, which runs on until its last step.
    Steps(Box<Steps>),
}

impl Waiting {
    /// Reads `resume`: the call's value, or its next request.
    pub fn take(
        self,
        sim: &mut Sim,
        resume: Resume,
    ) -> Result<Result<Dynamic, (Request, Waiting)>, Box<EvalAltResult>> {
        match self {
            Waiting::Answer(answer) => sim.answer(answer, resume).map(Ok),
            Waiting::Steps(steps) => Waiting::steps(sim, steps, Some(resume)),
        }
    }

    fn steps(
        sim: &mut Sim,
        mut steps: Box<Steps>,
        resume: Option<Resume>,
    ) -> Result<Result<Dynamic, (Request, Waiting)>, Box<EvalAltResult>> {
        Ok(match sim.advance(&mut steps, resume)? {
            Progress::Wait(request) => Err((request, Waiting::Steps(steps))),
            Progress::Done(seconds) => Ok(Dynamic::from_float(seconds)),
        })
    }
}

/// How often the machine counts its operations and asks `tick` whether to go on (and reads the
/// clock): reading it costs more than an operation, as the sandbox's `CLOCK_EVERY` is for Rhai.
const TICK_EVERY: u32 = 1 << 10;

impl Machine {
    /// Runs until a `sim` call waits on the engine or the script ends. `tick` is told the
    /// operations run since it was last told, whether to read the clock too (every
    /// [`TICK_EVERY`] operations), and where the script is; its error stops the script.
    pub fn run(
        &mut self,
        program: &Program,
        sim: &mut Sim,
        limits: &SizeLimits,
        tick: &mut dyn FnMut(u32, bool, Position) -> Result<(), Box<EvalAltResult>>,
    ) -> Result<Stop, Box<EvalAltResult>> {
        let mut ops = 0u32;
        let mut inside = Position::NONE;
        loop {
            ops += 1;
            if ops == TICK_EVERY {
                tick(ops, true, inside)?;
                ops = 0;
            }
            let op = &program.code[self.pc];
            self.pc += 1;
            match op {
                Op::Const(value) => self.stack.push(value.clone()),
                Op::Load(slot) => self.stack.push(self.slots[usize::from(*slot)].clone()),
                Op::Store(slot) => self.slots[usize::from(*slot)] = self.pop(),
                Op::Pop => {
                    self.stack.pop();
                }
                Op::Jump(to) => self.pc = *to,
                Op::Repeat { to, at } => {
                    self.pc = *to;
                    inside = *at;
                }
                Op::JumpUnless(to) => {
                    if !self.pop().as_bool().unwrap_or(false) {
                        self.pc = *to;
                    }
                }
                Op::Binary { operator, at } => {
                    let right = self.pop();
                    let left = self.pop();
                    let value = operator
                        .apply(&left, &right, limits.string)
                        .map_err(|e| placed(e, *at))?;
                    self.stack.push(value);
                }
                Op::Negate { at } => {
                    let value = negate(&self.pop()).map_err(|e| placed(e, *at))?;
                    self.stack.push(value);
                }
                Op::Field(name) => {
                    let message = self.pop();
                    let field = message.read_lock::<Received>().and_then(|m| m.field(name));
                    self.stack.push(field.unwrap_or(Dynamic::UNIT));
                }
                Op::Not => {
                    let value = self.pop().as_bool().unwrap_or(false);
                    self.stack.push(Dynamic::from_bool(!value));
                }
                Op::RangeStart { counter, inclusive } => {
                    let end = self.pop().as_int().unwrap_or(0);
                    let start = self.pop().as_int().unwrap_or(0);
                    // An inclusive range to i64::MAX loses its last value: 2⁶³ turns later.
                    let end = if *inclusive { end.saturating_add(1) } else { end };
                    let counter = usize::from(*counter);
                    self.slots[counter] = Dynamic::from_int(start);
                    self.slots[counter + 1] = Dynamic::from_int(end);
                }
                Op::RangeNext { counter, var, exit } => {
                    let counter = usize::from(*counter);
                    let next = self.slots[counter].as_int().unwrap_or(0);
                    if next < self.slots[counter + 1].as_int().unwrap_or(0) {
                        self.slots[usize::from(*var)] = Dynamic::from_int(next);
                        self.slots[counter] = Dynamic::from_int(next + 1);
                    } else {
                        self.pc = *exit;
                    }
                }
                Op::Call { method, args, at } => {
                    let first = self.stack.len() - usize::from(*args);
                    let started = sim.start(*method, &mut self.stack[first..]);
                    self.stack.truncate(first);
                    let waiting = match started.map_err(|e| placed(e, *at))? {
                        Started::Value(value) => Ok(value),
                        Started::Wait(request, answer) => Err((request, Waiting::Answer(answer))),
                        Started::Steps(steps) => {
                            Waiting::steps(sim, steps, None).map_err(|e| placed(e, *at))?
                        }
                    };
                    match waiting {
                        Ok(value) => self.stack.push(value),
                        Err((request, waiting)) => {
                            tick(ops, false, *at)?;
                            return Ok(Stop::Wait(request, waiting, *at));
                        }
                    }
                }
                Op::Concat { parts } => {
                    let first = self.stack.len() - parts.len();
                    let mut text = String::new();
                    for (value, at) in self.stack.drain(first..).zip(parts.iter()) {
                        // Rhai writes a text as it is and anything else by `to_string`, which
                        // for numbers and booleans is their display.
                        let _ = write!(text, "{value}");
                        limits.check((0, 0, text.len()), *at)?;
                    }
                    self.stack.push(Dynamic::from(ImmutableString::from(text)));
                }
                Op::Array { items } => {
                    let first = self.stack.len() - items.len();
                    let mut bytes = 0;
                    for (n, (value, at)) in self.stack[first..].iter().zip(items.iter()).enumerate() {
                        bytes += text_bytes(value);
                        limits.check((n + 1, 0, bytes), *at)?;
                    }
                    let array: rhai::Array = self.stack.drain(first..).collect();
                    self.stack.push(Dynamic::from_array(array));
                }
                Op::Map { keys, template } => {
                    let first = self.stack.len() - keys.len();
                    let mut map = (**template).clone();
                    let mut bytes = 0;
                    for (n, (value, (key, at))) in self.stack.drain(first..).zip(keys.iter()).enumerate() {
                        bytes += text_bytes(&value);
                        limits.check((0, n + 1, bytes), *at)?;
                        map.insert(key.clone(), value);
                    }
                    self.stack.push(Dynamic::from_map(map));
                }
                Op::End => {
                    tick(ops, false, inside)?;
                    return Ok(Stop::End);
                }
            }
        }
    }

    fn pop(&mut self) -> Dynamic {
        self.stack.pop().unwrap_or(Dynamic::UNIT)
    }
}

/// A native function's error placed where the script called it, as Rhai places it.
pub fn placed(mut error: Box<EvalAltResult>, at: Position) -> Box<EvalAltResult> {
    if error.position().is_none() {
        error.set_position(at);
    }
    error
}

fn text_bytes(value: &Dynamic) -> usize {
    value.read_lock::<ImmutableString>().map_or(0, |s| s.len())
}

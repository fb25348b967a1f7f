//! Instructions decoded once per launch into what the warp needs: the operation, its value and
//! predicate inputs in order (parameters and dimensions already read from constant bank 0),
//! the registers it writes and, for a global access, its address.
//!
//! An instruction whose form is not modelled exactly (floating point, loads, shuffles, an
//! unexpected operand count) writes unknown values: it may make a later branch unresolved,
//! never wrong.

use super::alu::{Bop, Cmp, ImadMode, Logic, Op, Xmad, MAX_PREDS, MAX_VALUES};
use super::launch::{ConstBank, Special};
use crate::arch::{access_bytes, memory_space, Arch, Space};
use crate::regs;
use crate::sass::{Address, Instruction, Operand, RegOperand, Register, PT, RZ, URZ};

/// A register the emulator tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reg {
    /// `R0` … `R254`.
    R(u8),
    /// `UR0` … `UR62`.
    Ur(u8),
    /// `P0` … `P6`.
    P(u8),
    /// `UP0` … `UP6`.
    Up(u8),
    /// The sm_5x–6x condition code's carry.
    Cc,
}

/// Slots of the tracked registers, for per-register bookkeeping.
pub const SLOTS: usize = 256 + 64 + 8 + 8 + 1;

impl Reg {
    /// A tracked register, or `None` for the constant ones (`RZ`, `PT`, …) and barriers.
    pub fn from_register(r: Register) -> Option<Reg> {
        match r {
            Register::General(n) if n != RZ => Some(Reg::R(n)),
            Register::Uniform(n) if n != URZ => Some(Reg::Ur(n)),
            Register::Predicate(n) if n != PT => Some(Reg::P(n)),
            Register::UniformPredicate(n) if n != PT => Some(Reg::Up(n)),
            Register::ConditionCode => Some(Reg::Cc),
            _ => None,
        }
    }

    pub fn slot(self) -> usize {
        match self {
            Reg::R(n) => n as usize,
            Reg::Ur(n) => 256 + n as usize,
            Reg::P(n) => 320 + n as usize,
            Reg::Up(n) => 328 + n as usize,
            Reg::Cc => 336,
        }
    }

    /// The next register of a pair (`R3` after `R2`); `None` past the last.
    fn next(self) -> Option<Reg> {
        match self {
            Reg::R(n) if n + 1 < RZ => Some(Reg::R(n + 1)),
            Reg::Ur(n) if n + 1 < URZ => Some(Reg::Ur(n + 1)),
            _ => None,
        }
    }
}

/// Where a value input comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// A register; `None` for `RZ`/`URZ` (zero).
    Reg(Option<Reg>),
    Imm(u32),
    /// A word of constant bank 0 at a fixed offset, known or not.
    Const(Option<u32>),
    /// `c[0x0][R2+0x10]`: a per-lane (or uniform) offset.
    ConstAt {
        index: Reg,
        offset: i64,
    },
    Special(Special),
    /// Anything the emulator does not read (another bank, a texture handle).
    Unknown,
}

/// A value input with its decorations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    pub source: Source,
    /// `-R0`: two's complement.
    pub negate: bool,
    /// `~R0`: one's complement.
    pub invert: bool,
    /// `|R0|`.
    pub absolute: bool,
    /// `R0.H1` (true) or `R0.H0` (false): a 16-bit half.
    pub half: Option<bool>,
}

impl Value {
    fn plain(source: Source) -> Value {
        Value {
            source,
            negate: false,
            invert: false,
            absolute: false,
            half: None,
        }
    }
}

/// A predicate input: `None` is `PT`, which always holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pred {
    pub reg: Option<Reg>,
    pub invert: bool,
}

impl Pred {
    pub const TRUE: Pred = Pred {
        reg: None,
        invert: false,
    };

    /// `!PT`: always false.
    fn is_false(&self) -> bool {
        self.reg.is_none() && self.invert
    }
}

/// A global- or shared-memory access's address: a register (or pair), a uniform register (or
/// pair) and an offset, summed. Shared addresses are 32-bit: one register, one uniform register.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub space: Space,
    pub base: Option<(Reg, Option<Reg>)>,
    pub uniform: Option<(Reg, Option<Reg>)>,
    pub offset: i64,
    /// Bytes each thread moves.
    pub bytes: u32,
}

/// How the warp runs an instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Compute(Op),
    /// `VOTE.ANY/ALL/EQ Rd, Pd, Pin` (and `VOTEU`): a ballot of the input over the lanes.
    Vote(VoteMode),
    /// `R2UR`: a register's value, when every active lane agrees on it.
    R2ur,
    /// `R2P PR, Ra, mask`: predicates P0–P6 from the bits of Ra (`.B1`–`.B3`: shifted by 8·k).
    R2p {
        shift: u32,
    },
    /// A global or shared load, store or atomic: its addresses are counted (sectors, banks);
    /// what it loads is unknown.
    Memory(Access),
    Branch,
    /// `EXIT`, `RET`, `KILL`.
    Exit,
    /// `CALL`: the callee is not followed (as in static mode); the registers it writes
    /// become unknown.
    Call,
    /// Control flow the emulator does not follow (`BRX`, `SSY`/`SYNC`, `PBK`/`BRK`, …).
    Unfollowed,
    /// Writes unknown values to its destinations.
    Unmodeled,
}

/// `VOTE`'s modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    Any,
    All,
    Eq,
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub kind: Kind,
    /// Runs on the uniform datapath: computed once per warp.
    pub uniform: bool,
    pub guard: Pred,
    pub values: Vec<Value>,
    pub preds: Vec<Pred>,
    /// Destination words in order (a pair for `IMAD.WIDE`); `None` discards (`RZ`).
    pub words: Vec<Option<Reg>>,
    /// Destination flags in order (predicates, the condition code); `None` discards (`PT`).
    pub flags: Vec<Option<Reg>>,
    /// Everything an unmodelled instruction, load or call makes unknown.
    pub clobbers: Vec<Reg>,
}

fn is_predicate(o: &Operand) -> bool {
    o.reg()
        .is_some_and(|r| matches!(r.reg, Register::Predicate(_) | Register::UniformPredicate(_)))
}

/// The destination word(s) of a register operand, `width` wide (`R2` and `R3` for a pair).
fn word_destinations(operand: Option<&Operand>, width: u8) -> Option<Vec<Option<Reg>>> {
    let r = operand?.reg()?;
    if !matches!(r.reg, Register::General(_) | Register::Uniform(_)) {
        return None;
    }
    let mut out = vec![Reg::from_register(r.reg)];
    for _ in 1..width {
        let next = out.last().copied().flatten().and_then(Reg::next);
        out.push(next);
    }
    Some(out)
}

/// Predicate destinations among `operands` (`PT` discards); `None` if one is not a predicate.
fn flag_destinations(operands: &[Operand]) -> Option<Vec<Option<Reg>>> {
    operands
        .iter()
        .map(|o| match o.reg().map(|r| r.reg) {
            Some(r @ (Register::Predicate(_) | Register::UniformPredicate(_))) => Some(Reg::from_register(r)),
            _ => None,
        })
        .collect()
}

const CARRY: Pred = Pred {
    reg: Some(Reg::Cc),
    invert: false,
};

/// Decodes every instruction of a kernel for one launch.
pub struct Decoder<'a> {
    pub arch: Arch,
    pub bank: &'a ConstBank,
    pub instructions: &'a [Instruction],
}

/// The operation and operands of a modelled instruction.
struct Shape {
    kind: Kind,
    values: Vec<Value>,
    preds: Vec<Pred>,
    words: Vec<Option<Reg>>,
    flags: Vec<Option<Reg>>,
}

impl Decoder<'_> {
    pub fn decode(&self, index: usize) -> Decoded {
        let ins = &self.instructions[index];
        let uniform_op =
            self.arch.has_uniform_datapath() && ins.opcode.len() > 1 && ins.opcode.starts_with('U');
        let name = if uniform_op {
            &ins.opcode[1..]
        } else {
            ins.opcode.as_str()
        };
        let guard = ins.guard.map_or(Pred::TRUE, |g| Pred {
            reg: Reg::from_register(g.reg),
            invert: g.negated,
        });
        let mut decoded = Decoded {
            kind: Kind::Unmodeled,
            uniform: uniform_op || ins.opcode == "S2UR",
            guard,
            values: Vec::new(),
            preds: Vec::new(),
            words: Vec::new(),
            flags: Vec::new(),
            clobbers: self.clobbers(ins),
        };
        if let Some(kind) = control(ins) {
            if kind == Kind::Call {
                decoded.clobbers = self.callee_writes(ins);
            }
            decoded.kind = kind;
        } else if let Some(space @ (Space::Global | Space::Shared)) = memory_space(ins, self.arch) {
            // LDSM/STSM lanes address rows of 8x8 matrices, not their own words.
            let matrix = ins.opcode.starts_with("LDSM") || ins.opcode.starts_with("STSM");
            if let (false, Some(access)) = (matrix, self.access(ins, space)) {
                decoded.kind = Kind::Memory(access);
            }
        } else if let Some(shape) = self.compute(name, ins) {
            decoded.kind = shape.kind;
            decoded.values = shape.values;
            decoded.preds = shape.preds;
            decoded.words = shape.words;
            decoded.flags = shape.flags;
            decoded.clobbers.clear();
        }
        decoded
    }

    /// Registers an unmodelled instruction writes, pairs and quads included.
    fn clobbers(&self, ins: &Instruction) -> Vec<Reg> {
        let mut out: Vec<Reg> = regs::writes(ins)
            .into_iter()
            .filter_map(Reg::from_register)
            .collect();
        let n = regs::destination_count(ins);
        for r in ins.operands[..n]
            .iter()
            .filter_map(|o| o.reg().and_then(|r| Reg::from_register(r.reg)))
        {
            if !out.contains(&r) {
                out.push(r);
            }
        }
        out
    }

    /// What a `CALL`'s callee writes: the instructions from its target to the first `RET`.
    fn callee_writes(&self, ins: &Instruction) -> Vec<Reg> {
        let Some(target) = ins.branch_target() else {
            return Vec::new();
        };
        let start = self.instructions.partition_point(|i| i.address < target);
        let mut out = Vec::new();
        for callee in &self.instructions[start..] {
            out.extend(self.clobbers(callee));
            if callee.opcode == "RET" {
                break;
            }
        }
        out.sort_by_key(|r| r.slot());
        out.dedup();
        out
    }

    fn access(&self, ins: &Instruction, space: Space) -> Option<Access> {
        let memory: Vec<&Address> = ins
            .operands
            .iter()
            .filter_map(|o| match o {
                Operand::Memory(a) => Some(a),
                _ => None,
            })
            .collect();
        let address = *memory.iter().find(|a| a.descriptor.is_some()).or(memory.last())?;
        let register_pair = |r: &RegOperand| {
            let regs: Vec<Reg> = regs::address_registers(ins, r)
                .filter_map(Reg::from_register)
                .collect();
            regs.first().map(|&first| (first, regs.get(1).copied()))
        };
        let base = address.base.as_ref().and_then(register_pair);
        let wide_base = base.is_some_and(|(_, hi)| hi.is_some());
        let uniform = address.uniform.as_ref().and_then(|u| {
            let first = Reg::from_register(u.reg)?;
            // With a 64-bit register base the uniform register is a 32-bit offset; otherwise
            // it is the 64-bit base (`[R2.U32+UR4]`, `[UR4]`) of a global access.
            let wide_uniform = !wide_base && space == Space::Global;
            Some((first, if wide_uniform { first.next() } else { None }))
        });
        Some(Access {
            space,
            base,
            uniform,
            offset: address.offset,
            bytes: access_bytes(ins),
        })
    }

    fn value(&self, operand: &Operand) -> Value {
        let half = |suffixes: &[String]| {
            suffixes.iter().find_map(|s| match s.as_str() {
                "H1" => Some(true),
                "H0" => Some(false),
                _ => None,
            })
        };
        match operand {
            Operand::Reg(r) => Value {
                source: Source::Reg(Reg::from_register(r.reg)),
                negate: r.negated,
                invert: r.inverted,
                absolute: r.absolute,
                half: half(&r.suffixes),
            },
            Operand::Int(v) => Value::plain(Source::Imm(*v as u32)),
            Operand::Float(x) => Value::plain(Source::Imm((*x as f32).to_bits())),
            Operand::Constant {
                bank,
                address,
                negated,
                absolute,
                suffixes,
            } => Value {
                source: self.constant(*bank, address, 0),
                negate: *negated,
                invert: false,
                absolute: *absolute,
                half: half(suffixes),
            },
            Operand::Special(name) => Value::plain(Source::Special(Special::parse(name))),
            Operand::Memory(_) | Operand::Other(_) => Value::plain(Source::Unknown),
        }
    }

    /// `c[bank][address + extra]`.
    fn constant(&self, bank: u32, address: &Address, extra: i64) -> Source {
        if bank != 0 {
            return Source::Unknown;
        }
        let index = |r: &Option<RegOperand>| r.as_ref().and_then(|r| Reg::from_register(r.reg));
        let offset = address.offset + extra;
        match (index(&address.base), index(&address.uniform)) {
            (None, None) => Source::Const(self.bank.word(offset)),
            (Some(index), None) | (None, Some(index)) => Source::ConstAt { index, offset },
            (Some(_), Some(_)) => Source::Unknown,
        }
    }

    /// The high word of a 64-bit addend whose low word is `low`, read from `operand`
    /// (`IMAD.WIDE`'s and `IMAD.HI`'s c is the pair `c+1:c`): the next register, zero for
    /// `RZ`, the next constant word; `None` for an immediate, whose high word is not clear.
    fn high_word(&self, operand: &Operand, low: &Value) -> Option<Value> {
        if low.negate || low.invert || low.absolute || low.half.is_some() {
            return None;
        }
        match (operand, low.source) {
            (_, Source::Reg(None)) => Some(*low),
            (_, Source::Reg(Some(r))) => Some(Value::plain(Source::Reg(Some(r.next()?)))),
            (Operand::Constant { bank, address, .. }, _) => {
                Some(Value::plain(self.constant(*bank, address, 4)))
            }
            _ => None,
        }
    }

    /// Value and predicate inputs, each in operand order.
    fn inputs(&self, sources: &[Operand]) -> (Vec<Value>, Vec<Pred>) {
        let mut values = Vec::new();
        let mut preds = Vec::new();
        for o in sources {
            match o.reg() {
                Some(r) if matches!(r.reg, Register::Predicate(_) | Register::UniformPredicate(_)) => preds
                    .push(Pred {
                        reg: Reg::from_register(r.reg),
                        invert: r.inverted,
                    }),
                Some(r) if r.reg == Register::ConditionCode => preds.push(CARRY),
                _ => values.push(self.value(o)),
            }
        }
        (values, preds)
    }

    /// The operation and its operands, when `name`'s form is modelled.
    fn compute(&self, name: &str, ins: &Instruction) -> Option<Shape> {
        if ins.has_modifier("128") || (ins.has_modifier("64") && name != "LDC") {
            return None;
        }
        let n = regs::destination_count(ins);
        let (dests, sources) = ins.operands.split_at(n);
        let (mut values, mut preds) = self.inputs(sources);
        let op = match name {
            "LOP3" => return lop3(ins, dests, values, preds),
            "VOTE" => return vote(ins, dests, values, preds),
            "R2UR" if values.len() == 1 && preds.is_empty() && dests.len() == 1 => {
                return Some(Shape {
                    kind: Kind::R2ur,
                    values,
                    preds,
                    words: word_destinations(dests.first(), 1)?,
                    flags: Vec::new(),
                });
            }
            "R2P" if values.len() == 2 && preds.is_empty() && dests.len() == 1 => {
                return Some(Shape {
                    kind: Kind::R2p {
                        shift: byte_shift(ins),
                    },
                    values,
                    preds,
                    words: Vec::new(),
                    flags: Vec::new(),
                });
            }
            "LDC" => {
                let Some(Operand::Constant { bank, address, .. }) = sources.first() else {
                    return None;
                };
                if sources.len() != 1 || ins.modifiers.iter().any(|x| x != "64") {
                    return None;
                }
                if ins.has_modifier("64") {
                    values.push(Value::plain(self.constant(*bank, address, 4)));
                }
                Op::Mov
            }
            "HFMA2" => {
                values = vec![Value::plain(Source::Imm(half_pair_move(ins, sources)?))];
                Op::Mov
            }
            _ => self.operation(name, ins, sources, &mut values, &mut preds)?,
        };
        if values.len() > MAX_VALUES || preds.len() > MAX_PREDS {
            return None;
        }
        let (words, mut flags) = match op {
            Op::Isetp { .. } | Op::Psetp { .. } | Op::Plop3 => (Vec::new(), flag_destinations(dests)?),
            _ => {
                let width = match op {
                    Op::Mov => values.len() as u8,
                    Op::Imad {
                        mode: ImadMode::Wide { .. },
                        ..
                    } => 2,
                    _ => 1,
                };
                (
                    word_destinations(dests.first(), width)?,
                    flag_destinations(dests.get(1..).unwrap_or(&[]))?,
                )
            }
        };
        if dests
            .first()
            .and_then(Operand::reg)
            .is_some_and(|r| r.has_suffix("CC"))
        {
            flags.push(Some(Reg::Cc));
        }
        if flags.len() > flag_outputs(op) {
            return None;
        }
        Some(Shape {
            kind: Kind::Compute(op),
            values,
            preds,
            words,
            flags,
        })
    }

    /// The operation of an arithmetic, logic or move instruction, adjusting its inputs to what
    /// [`alu::eval`](super::alu::eval) reads; `None` for a form not modelled.
    fn operation(
        &self,
        name: &str,
        ins: &Instruction,
        sources: &[Operand],
        values: &mut Vec<Value>,
        preds: &mut Vec<Pred>,
    ) -> Option<Op> {
        let m = |s: &str| ins.has_modifier(s);
        let (nv, np) = (values.len(), preds.len());
        // sm_5x–6x carry in the condition code; later architectures in a predicate operand.
        let cc_carry = self.arch.major <= 6;
        Some(match name {
            "MOV" | "MOV32I" | "S2R" | "S2UR" if nv >= 1 && np == 0 => {
                values.truncate(1);
                Op::Mov
            }
            "CS2R" if nv == 1 && np == 0 => {
                if !m("32") {
                    values.push(values[0]);
                }
                Op::Mov
            }
            "IMAD" if nv == 3 => self.imad(ins, sources, values, np)?,
            "IMUL" | "IMUL32I" if nv == 2 && np == 0 => {
                if m("U32") && m("S32") {
                    return None;
                }
                Op::Imul {
                    high: m("HI"),
                    signed: !m("U32"),
                }
            }
            "IADD3" if nv == 3 => {
                let extended = m("X");
                if (!extended && np != 0) || np > 2 {
                    return None;
                }
                Op::Add {
                    negate: take_negation(values),
                    extended,
                }
            }
            "IADD" | "IADD32I" if nv == 2 && np == 0 && cc_carry => {
                if ins.modifiers.iter().any(|x| x != "X") {
                    return None;
                }
                let extended = m("X");
                if extended {
                    preds.push(CARRY);
                }
                values.push(Value::plain(Source::Reg(None)));
                Op::Add {
                    negate: take_negation(values),
                    extended,
                }
            }
            "VIADD" if nv == 2 && np == 0 && ins.modifiers.is_empty() => {
                values.push(Value::plain(Source::Reg(None)));
                Op::Add {
                    negate: take_negation(values),
                    extended: false,
                }
            }
            "ISCADD" | "ISCADD32I" if nv == 3 && np == 0 && ins.modifiers.is_empty() => Op::Iscadd,
            "XMAD" if nv == 3 && np == 0 => Op::Xmad(xmad(ins, values)?),
            "ISETP" if nv == 2 => {
                let op = isetp(ins)?;
                let Op::Isetp { extended, .. } = op else {
                    return None;
                };
                if np != 1 + usize::from(extended) {
                    return None;
                }
                op
            }
            "PSETP" if np == 3 && nv == 0 => {
                let bops: Vec<Bop> = ins
                    .modifiers
                    .iter()
                    .map(|x| Bop::parse(x))
                    .collect::<Option<_>>()?;
                let (first, second) = match bops.as_slice() {
                    [a, b] => (*a, *b),
                    [a] => (*a, Bop::And),
                    _ => return None,
                };
                Op::Psetp { first, second }
            }
            "PLOP3" if np == 3 && nv == 2 && immediates(values) => Op::Plop3,
            "LEA" if np <= 1 => lea(ins, nv, preds, cc_carry)?,
            "SHF" if nv == 3 && np == 0 => shf(ins)?,
            "SHL" if nv == 2 && np == 0 => Op::Shl { wrap: m("W") },
            "SHR" if nv == 2 && np == 0 => Op::Shr {
                signed: !m("U32"),
                wrap: m("W"),
            },
            "LOP" | "LOP32I" if nv == 2 && np == 0 => Op::Lop(match ins.modifiers.as_slice() {
                [x] if x == "AND" => Logic::And,
                [x] if x == "OR" => Logic::Or,
                [x] if x == "XOR" => Logic::Xor,
                [x] if x == "PASS_B" => Logic::PassB,
                _ => return None,
            }),
            "SEL" if nv == 2 && np == 1 => Op::Sel,
            "IMNMX" | "VIMNMX" if nv == 2 && np == 1 => Op::Imnmx { signed: !m("U32") },
            "IABS" if nv == 1 && np == 0 => Op::Iabs,
            "POPC" | "FLO" | "BREV" if nv >= 1 && np == 0 => {
                // Maxwell's forms take an extra leading operand; the last one is the input.
                values.drain(..nv - 1);
                match name {
                    "POPC" => Op::Popc,
                    "FLO" => Op::Flo {
                        signed: !m("U32"),
                        shift: m("SH"),
                    },
                    _ => Op::Brev,
                }
            }
            "PRMT" if nv == 3 && np == 0 && ins.modifiers.is_empty() => Op::Prmt,
            "BFE" if nv == 2 && np == 0 => Op::Bfe { signed: !m("U32") },
            "BFI" if nv == 3 && np == 0 => Op::Bfi,
            "SGXT" if nv == 2 && np == 0 => Op::Sgxt { signed: !m("U32") },
            "BMSK" if nv == 2 && np == 0 => Op::Bmsk { wrap: m("W") },
            "P2R" if nv == 3 && np == 0 => {
                values.remove(0);
                *preds = (0..MAX_PREDS as u8)
                    .map(|n| Pred {
                        reg: Some(Reg::P(n)),
                        invert: false,
                    })
                    .collect();
                Op::P2r {
                    shift: byte_shift(ins),
                }
            }
            _ => return None,
        })
    }
    /// `IMAD[.MOV|.IADD|.SHL][.U32]`, `IMAD.HI`, `IMAD.WIDE` (c a pair) and `IMAD.X` (a carry-in).
    fn imad(
        &self,
        ins: &Instruction,
        sources: &[Operand],
        values: &mut Vec<Value>,
        preds: usize,
    ) -> Option<Op> {
        let signed = !ins.has_modifier("U32");
        let carry_in = ins.has_modifier("X");
        let mode = if ins.has_modifier("HI") {
            ImadMode::High { signed }
        } else if ins.has_modifier("WIDE") {
            ImadMode::Wide { signed }
        } else {
            ImadMode::Low
        };
        let carries_fit = if carry_in {
            mode == ImadMode::Low && preds == 1
        } else {
            preds == 0
        };
        if !carries_fit {
            return None;
        }
        if mode != ImadMode::Low {
            let high = self.high_word(sources.get(2)?, &values[2])?;
            values.push(high);
        }
        Some(Op::Imad { mode, carry_in })
    }
}

/// Branches, exits and calls.
fn control(ins: &Instruction) -> Option<Kind> {
    Some(match ins.opcode.as_str() {
        "BRA" | "JMP" => Kind::Branch,
        "EXIT" | "RET" | "KILL" | "KIL" => Kind::Exit,
        "CALL" => Kind::Call,
        "BRX" | "JMX" | "JCAL" | "SSY" | "SYNC" | "PBK" | "BRK" | "PCNT" | "CONT" | "PRET" | "PEXIT" => {
            Kind::Unfollowed
        }
        _ => return None,
    })
}

/// How many flag outputs `op` computes.
fn flag_outputs(op: Op) -> usize {
    match op {
        Op::Add { .. } | Op::Isetp { .. } | Op::Psetp { .. } | Op::Plop3 => 2,
        Op::Iscadd | Op::Lea { .. } => 1,
        _ => 0,
    }
}

/// `LOP3.LUT Rd, a, b, c, lut, Pin` and `LOP3.LUT Pd, Rd, a, b, c, lut, !PT` (Pd = result ≠ 0).
fn lop3(ins: &Instruction, dests: &[Operand], values: Vec<Value>, preds: Vec<Pred>) -> Option<Shape> {
    if values.len() != 4 || preds.len() != 1 || !immediates(&values[3..]) || !ins.has_modifier("LUT") {
        return None;
    }
    let (word, pred_dests) = match dests {
        [p, r] if is_predicate(p) => (r, std::slice::from_ref(p)),
        [r, rest @ ..] => (r, rest),
        [] => return None,
    };
    let flags = flag_destinations(pred_dests)?;
    // With another predicate input the flag's combination is not modelled.
    if flags.len() > 1 || (!flags.is_empty() && !preds[0].is_false()) {
        return None;
    }
    Some(Shape {
        kind: Kind::Compute(Op::Lop3),
        values,
        preds,
        words: word_destinations(Some(word), 1)?,
        flags,
    })
}

/// `VOTE.ANY Rd, Pd, Pin` (and `VOTEU`).
fn vote(ins: &Instruction, dests: &[Operand], values: Vec<Value>, preds: Vec<Pred>) -> Option<Shape> {
    let mode = match ins.modifiers.as_slice() {
        [m] if m == "ANY" => VoteMode::Any,
        [m] if m == "ALL" => VoteMode::All,
        [m] if m == "EQ" => VoteMode::Eq,
        _ => return None,
    };
    if preds.len() != 1 || !values.is_empty() || dests.len() > 2 {
        return None;
    }
    Some(Shape {
        kind: Kind::Vote(mode),
        words: word_destinations(dests.first(), 1)?,
        flags: flag_destinations(dests.get(1..).unwrap_or(&[]))?,
        values,
        preds,
    })
}

/// `XMAD[.MRG][.PSL][.CBCC|.CHI|.CLO] d, a[.H1], b[.H1], c`: the halves are taken here, since
/// `.MRG` and `.CBCC` also use b's full word.
fn xmad(ins: &Instruction, values: &mut [Value]) -> Option<Xmad> {
    let mut x = Xmad::default();
    for modifier in &ins.modifiers {
        match modifier.as_str() {
            "MRG" => x.mrg = true,
            "PSL" => x.psl = true,
            "CBCC" => x.cbcc = true,
            "CHI" => x.c_half = Some(true),
            "CLO" => x.c_half = Some(false),
            _ => return None,
        }
    }
    if values.iter().any(|v| v.negate || v.invert || v.absolute) || values[2].half.is_some() {
        return None;
    }
    x.a_high = values[0].half.take() == Some(true);
    x.b_high = values[1].half.take() == Some(true);
    Some(x)
}

/// `LEA d, a, b, s`, `LEA.HI d, a, b, hi, s` and `LEA.HI[.X].SX32 d, a, b, s`; `.X` takes a
/// carry-in predicate, or the condition code on sm_5x–6x (`cc_carry`).
fn lea(ins: &Instruction, values: usize, preds: &mut Vec<Pred>, cc_carry: bool) -> Option<Op> {
    let high = ins.has_modifier("HI");
    let sign_extend = ins.has_modifier("SX32");
    let carry_in = ins.has_modifier("X");
    let expected = if high && !sign_extend { 4 } else { 3 };
    if values != expected
        || ins
            .modifiers
            .iter()
            .any(|x| !matches!(x.as_str(), "HI" | "X" | "SX32"))
    {
        return None;
    }
    match (carry_in, preds.len()) {
        (false, 0) | (true, 1) => {}
        (true, 0) if cc_carry => preds.push(CARRY),
        _ => return None,
    }
    Some(Op::Lea {
        high,
        sign_extend,
        carry_in,
    })
}

/// `ISETP.cmp[.U32].bop[.EX]`.
fn isetp(ins: &Instruction) -> Option<Op> {
    let (mut cmp, mut bop, mut signed, mut extended) = (None, None, true, false);
    for modifier in &ins.modifiers {
        match modifier.as_str() {
            "U32" => signed = false,
            "EX" => extended = true,
            other => {
                if let Some(c) = Cmp::parse(other) {
                    cmp = Some(c);
                } else {
                    bop = Some(Bop::parse(other)?);
                }
            }
        }
    }
    Some(Op::Isetp {
        cmp: cmp?,
        signed,
        bop: bop.unwrap_or(Bop::And),
        extended,
    })
}

/// `SHF.L|R[.U32|.S32|.U64|.S64][.HI][.W]`.
fn shf(ins: &Instruction) -> Option<Op> {
    let (mut left, mut high, mut signed, mut wide, mut wrap) = (None, false, false, false, false);
    for modifier in &ins.modifiers {
        match modifier.as_str() {
            "L" => left = Some(true),
            "R" => left = Some(false),
            "HI" => high = true,
            "W" => wrap = true,
            "U32" => {}
            "S32" => signed = true,
            "U64" => wide = true,
            "S64" => (signed, wide) = (true, true),
            _ => return None,
        }
    }
    Some(Op::Shf {
        left: left?,
        high,
        signed,
        wide,
        wrap,
    })
}

/// `HFMA2[.MMA] Rd, -RZ, RZ, h1, h0`: `-0·0 + (h1, h0)`, the way sm_75+ code moves a 32-bit
/// constant into a register (`HFMA2.MMA R5, -RZ, RZ, 0, 2.384185791015625e-07` sets R5 to 4):
/// the word whose high half is h1's and low half h0's binary16 bits.
fn half_pair_move(ins: &Instruction, sources: &[Operand]) -> Option<u32> {
    if ins.modifiers.iter().any(|m| m != "MMA") {
        return None;
    }
    let [a, b, high, low] = sources else { return None };
    let zero = |o: &Operand| {
        o.reg()
            .is_some_and(|r| r.reg == Register::General(RZ) && r.suffixes.is_empty())
    };
    let half = |o: &Operand| match o {
        Operand::Int(v) => binary16(*v as f64),
        Operand::Float(x) => binary16(*x),
        _ => None,
    };
    if !zero(a) || !zero(b) {
        return None;
    }
    Some(u32::from(half(high)?) << 16 | u32::from(half(low)?))
}

/// The binary16 bits of `x`, when `x` is exactly a binary16 number.
fn binary16(x: f64) -> Option<u16> {
    let f = x as f32;
    if f64::from(f) != x && !x.is_nan() {
        return None;
    }
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127;
    let mantissa = bits & 0x7f_ffff;
    if f.is_nan() {
        return Some(sign | 0x7e00);
    }
    if f.is_infinite() {
        return Some(sign | 0x7c00);
    }
    if f == 0.0 {
        return Some(sign);
    }
    if (-14..=15).contains(&exponent) {
        // Normal: 10 mantissa bits of the 23.
        if mantissa & 0x1fff != 0 {
            return None;
        }
        return Some(sign | ((exponent + 15) as u16) << 10 | (mantissa >> 13) as u16);
    }
    // Subnormal: x = m · 2^-24 with m below 2^10.
    let shift = u32::try_from(-exponent - 1).ok()?;
    let full = 0x80_0000 | mantissa;
    if shift >= 32 || full & ((1 << shift) - 1) != 0 || (full >> shift) >= 0x400 {
        return None;
    }
    Some(sign | (full >> shift) as u16)
}

/// Removes the `-` of the first three value inputs (the adder applies it, carries included).
fn take_negation(values: &mut [Value]) -> [bool; 3] {
    let mut negate = [false; 3];
    for (n, v) in negate.iter_mut().zip(values.iter_mut()) {
        *n = std::mem::take(&mut v.negate);
    }
    negate
}

fn immediates(values: &[Value]) -> bool {
    values
        .iter()
        .all(|v| matches!(v.source, Source::Imm(_)) && !v.negate && !v.invert)
}

/// `.B1`, `.B2`, `.B3` of `P2R`/`R2P`: the byte the predicates map to.
fn byte_shift(ins: &Instruction) -> u32 {
    ins.modifiers
        .iter()
        .find_map(|m| match m.as_str() {
            "B1" => Some(8),
            "B2" => Some(16),
            "B3" => Some(24),
            _ => None,
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulate::{Arg, Launch};
    use crate::sass::parse_instruction;

    fn decode_on(arch: Arch, text: &str) -> Decoded {
        let launch = Launch {
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![Arg::Int(1000), Arg::Int(8), Arg::Pointer, Arg::Pointer],
            dynamic_shared: 0,
        };
        let bank = ConstBank::new(arch, &launch).expect("bank");
        let instructions = vec![parse_instruction(text, 1).expect("parses")];
        Decoder {
            arch,
            bank: &bank,
            instructions: &instructions,
        }
        .decode(0)
    }

    fn decode(text: &str) -> Decoded {
        decode_on(Arch::HOPPER, text)
    }

    #[test]
    fn hfma2_moves_a_constant() {
        let d = decode("HFMA2.MMA R5, -RZ, RZ, 0, 2.384185791015625e-07");
        assert_eq!(d.kind, Kind::Compute(Op::Mov));
        assert_eq!(d.values[0].source, Source::Imm(4));
        assert_eq!(d.words, vec![Some(Reg::R(5))]);
        assert_eq!(
            decode("HFMA2.MMA R5, -RZ, RZ, 1.875, 1").values[0].source,
            Source::Imm(0x3f80_3c00)
        );
        // A real multiply-add stays unknown.
        assert_eq!(decode("HFMA2 R5, R2, R3, 0, 1").kind, Kind::Unmodeled);
    }

    #[test]
    fn binary16_bits() {
        assert_eq!(binary16(1.0), Some(0x3c00));
        assert_eq!(binary16(-2.0), Some(0xc000));
        assert_eq!(binary16(65504.0), Some(0x7bff));
        assert_eq!(binary16(2.0f64.powi(-24)), Some(1));
        assert_eq!(binary16(0.1), None, "not a binary16 number");
        assert_eq!(binary16(1e6), None);
    }

    #[test]
    fn parameters_and_pairs_are_read_at_decode() {
        let d = decode("LDC.64 R2, c[0x0][0x218]");
        assert_eq!(d.words, vec![Some(Reg::R(2)), Some(Reg::R(3))]);
        assert_eq!(d.values[0].source, Source::Const(Some(0)));
        assert_eq!(d.values[1].source, Source::Const(Some((3u64 << 40 >> 32) as u32)));
        // IMAD.WIDE's addend pair from the constant bank (sm_80: `c[0x0][0x168]`).
        let d = decode_on(Arch { major: 8, minor: 0 }, "IMAD.WIDE R2, R2, R5, c[0x0][0x168]");
        assert_eq!(d.values.len(), 4);
        assert_eq!(d.values[3].source, Source::Const(Some((3u64 << 40 >> 32) as u32)));
        let d = decode("ULDC UR4, c[0x0][0x0]");
        assert!(d.uniform);
        assert_eq!(d.values[0].source, Source::Const(Some(256)));
        assert_eq!(
            decode("LDC R7, c[0x0][RZ]").values[0].source,
            Source::Const(Some(256))
        );
        let d = decode("LDC R0, c[0x0][R2+0x10]");
        assert_eq!(
            d.values[0].source,
            Source::ConstAt {
                index: Reg::R(2),
                offset: 0x10
            }
        );
    }

    #[test]
    fn destinations_of_carries_and_predicate_forms() {
        let d = decode("IADD3 R2, P0, P1, R0, -R4, RZ");
        assert_eq!(d.flags, vec![Some(Reg::P(0)), Some(Reg::P(1))]);
        assert_eq!(
            d.kind,
            Kind::Compute(Op::Add {
                negate: [false, true, false],
                extended: false
            })
        );
        let d = decode("LOP3.LUT P0, RZ, R4, 0x3, RZ, 0xc0, !PT");
        assert_eq!(
            (d.words.clone(), d.flags.clone()),
            (vec![None], vec![Some(Reg::P(0))])
        );
        assert_eq!(
            decode("LOP3.LUT P0, RZ, R4, 0x3, RZ, 0xc0, P1").kind,
            Kind::Unmodeled
        );
        let d = decode("ISETP.GE.AND P0, PT, R5, UR4, PT");
        assert_eq!((d.words.len(), d.flags.clone()), (0, vec![Some(Reg::P(0)), None]));
        let d = decode_on(Arch::MAXWELL, "IADD R2.CC, R6, c[0x0][0x148]");
        assert_eq!(d.flags, vec![Some(Reg::Cc)]);
        let d = decode_on(Arch::MAXWELL, "IADD.X R3, R7, c[0x0][0x14c]");
        assert_eq!(d.preds, vec![CARRY]);
        let d = decode_on(Arch::MAXWELL, "LEA.HI.X R3, R5, c[0x0][0x14c], R0, 0x3");
        assert_eq!((d.values.len(), d.preds.clone()), (4, vec![CARRY]));
    }

    #[test]
    fn unmodelled_instructions_clobber_what_they_write() {
        let d = decode("FADD R0, R3, R0");
        assert_eq!(
            (d.kind.clone(), d.clobbers.clone()),
            (Kind::Unmodeled, vec![Reg::R(0)])
        );
        let d = decode("SHFL.IDX PT, R3, R0, R1, R2");
        assert!(d.clobbers.contains(&Reg::R(3)), "{:?}", d.clobbers);
        let d = decode("DADD R4, R4, R8");
        assert_eq!(d.clobbers, vec![Reg::R(4), Reg::R(5)]);
        let d = decode("LDG.E.64 R4, desc[UR4][R2.64+0x8]");
        let Kind::Memory(access) = &d.kind else {
            panic!("a global access: {:?}", d.kind)
        };
        assert_eq!(access.base, Some((Reg::R(2), Some(Reg::R(3)))));
        assert_eq!((access.offset, access.bytes), (8, 8));
        assert_eq!(d.clobbers, vec![Reg::R(4), Reg::R(5)]);
        assert_eq!(decode("STG.E desc[UR4][R2.64], R5").clobbers, vec![]);
        assert_eq!(decode("BRX R2 -0x10").kind, Kind::Unfollowed);
    }
}

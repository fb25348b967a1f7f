//! Instructions decoded once per launch into what the warp needs: the operation, its value and
//! predicate inputs in order (parameters and dimensions already read from constant bank 0),
//! the registers it writes and, for a global access, its address.
//!
//! An instruction whose form is not modelled exactly (floating point, loads, shuffles, an
//! unexpected operand count) writes unknown values: it may make a later branch unresolved,
//! never wrong.
//!
//! Which opcodes and modifiers are modelled, and how, is in [`forms`].

mod forms;

use super::alu::Op;
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

#[cfg(test)]
mod tests {
    use super::forms::binary16;
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

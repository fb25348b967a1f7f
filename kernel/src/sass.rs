//! SASS listings: what `cuobjdump -sass` prints (sm_50 … sm_90, several kernels and several
//! architectures per file) and the thesis's numbered format (seed 004, Figure 5.2:
//! `22.{   FADD R5, R0, R5;` with `{ … }` around a dual-issued pair).
//!
//! Parsing ([`parse`], in the `parser` module) keeps every instruction's source line so that
//! later errors can name it; this module holds what it produces.

use crate::capability::Arch;
use serde::Serialize;
use std::fmt;

mod parser;

pub use parser::{demangle, maxwell_address, parse, parse_instruction, parse_register};

/// A parsed listing: one or more kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub kernels: Vec<Kernel>,
}

/// One kernel's code, in address order.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// The name as the listing gives it (mangled for C++ kernels).
    pub name: String,
    /// The demangled name, where the name is a mangled C++ one.
    pub demangled: Option<String>,
    /// From the listing's `code for sm_XX` or `.headerflags` line, if any.
    pub arch: Option<Arch>,
    /// The line of the `Function :` header (1-based), or of the first instruction.
    pub line: usize,
    pub instructions: Vec<Instruction>,
}

/// One SASS instruction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Instruction {
    /// Byte address in the kernel's code.
    pub address: u64,
    /// 1-based line in the listing.
    pub line: usize,
    /// The guard predicate, e.g. `@!P0`.
    pub guard: Option<Guard>,
    /// The mnemonic without modifiers (`ISETP`).
    pub opcode: String,
    /// The dot-separated modifiers (`GE`, `AND`).
    pub modifiers: Vec<String>,
    pub operands: Vec<Operand>,
    /// Issued in the same cycle as the next instruction (Maxwell/Pascal dual issue, `{ … }`).
    pub dual_issue_with_next: bool,
    /// The scheduling bits the compiler set (sm_70+ listings from `cuobjdump`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<Control>,
}

/// The compiler's scheduling decisions for one sm_70+ instruction: bits 105–125 of its
/// 128-bit encoding, the upper word `cuobjdump` prints on the line after it (Jia et al.,
/// "Dissecting the NVIDIA Volta GPU architecture via microbenchmarking", 2018, section 2.1).
/// Fixed-latency results are waited for by stalling; variable-latency ones (memory, `S2R`,
/// `MUFU`, …) through six scoreboard barriers that later instructions wait on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Control {
    /// Cycles before the warp may issue its next instruction.
    pub stall: u8,
    /// The barrier this instruction's result releases when written.
    pub write_barrier: Option<u8>,
    /// The barrier released once this instruction has read its sources.
    pub read_barrier: Option<u8>,
    /// Barriers (bit `k` for barrier `k`) that must be released before this issues.
    pub wait_mask: u8,
}

impl Control {
    /// Decodes the upper 64 bits of an sm_70+ instruction.
    pub fn from_upper_word(word: u64) -> Control {
        let bits = word >> 41;
        let barrier = |b: u64| (b != 7).then_some(b as u8);
        Control {
            stall: (bits & 0xf) as u8,
            write_barrier: barrier((bits >> 5) & 7),
            read_barrier: barrier((bits >> 8) & 7),
            wait_mask: ((bits >> 11) & 0x3f) as u8,
        }
    }
}

/// `@P0` or `@!UP1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Guard {
    pub negated: bool,
    pub reg: Register,
}

/// A register name. `RZ`, `URZ`, `PT` and `UPT` are the zero/true registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Register {
    /// `R0` … `R254`; `RZ` is 255.
    General(u8),
    /// `UR0` … `UR62`; `URZ` is 63.
    Uniform(u8),
    /// `P0` … `P6`; `PT` is 7.
    Predicate(u8),
    /// `UP0` … `UP6`; `UPT` is 7.
    UniformPredicate(u8),
    /// Convergence barrier registers `B0` … `B15` (sm_70+).
    Barrier(u8),
    /// The condition code of sm_5x–6x (`R2.CC` writes it, `IADD.X` reads it).
    ConditionCode,
}

pub const RZ: u8 = 255;
pub const URZ: u8 = 63;
pub const PT: u8 = 7;

impl Register {
    /// Reads as zero or true and ignores writes.
    pub fn is_constant(self) -> bool {
        matches!(
            self,
            Register::General(RZ)
                | Register::Uniform(URZ)
                | Register::Predicate(PT)
                | Register::UniformPredicate(PT)
        )
    }

    /// The `n`-th register after this one (for 64- and 128-bit operands).
    pub fn offset(self, n: u8) -> Register {
        match self {
            Register::General(r) if r != RZ => Register::General(r.saturating_add(n)),
            Register::Uniform(r) if r != URZ => Register::Uniform(r.saturating_add(n)),
            other => other,
        }
    }
}

impl fmt::Display for Register {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Register::General(RZ) => write!(f, "RZ"),
            Register::General(r) => write!(f, "R{r}"),
            Register::Uniform(URZ) => write!(f, "URZ"),
            Register::Uniform(r) => write!(f, "UR{r}"),
            Register::Predicate(PT) => write!(f, "PT"),
            Register::Predicate(p) => write!(f, "P{p}"),
            Register::UniformPredicate(PT) => write!(f, "UPT"),
            Register::UniformPredicate(p) => write!(f, "UP{p}"),
            Register::Barrier(b) => write!(f, "B{b}"),
            Register::ConditionCode => write!(f, "CC"),
        }
    }
}

/// A register operand with its prefix and suffix decorations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegOperand {
    pub reg: Register,
    /// `-R0`
    pub negated: bool,
    /// `!P0`, `~R0`
    pub inverted: bool,
    /// `|R0|`
    pub absolute: bool,
    /// Suffixes such as `reuse`, `H1`, `64`, `CC`, `X`, `U32`.
    pub suffixes: Vec<String>,
}

impl RegOperand {
    /// Registers this operand covers: two for `.64`, four for `.128`.
    pub fn width(&self) -> u8 {
        if self.suffixes.iter().any(|s| s == "128") {
            4
        } else if self.suffixes.iter().any(|s| s == "64") {
            2
        } else {
            1
        }
    }

    pub fn has_suffix(&self, suffix: &str) -> bool {
        self.suffixes.iter().any(|s| s == suffix)
    }
}

/// An address inside `[ … ]`: registers and an immediate offset added together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Address {
    /// General register base (`R2.64`, `R3`, `R2.U32`).
    pub base: Option<RegOperand>,
    /// Uniform register term (`UR4`), sm_75+.
    pub uniform: Option<RegOperand>,
    pub offset: i64,
    /// The `desc[UR6]` memory descriptor of sm_90 global accesses, if any.
    pub descriptor: Option<Register>,
}

/// One operand.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Operand {
    Reg(RegOperand),
    /// An integer immediate (hex or decimal) or a branch target.
    Int(i64),
    /// A floating-point immediate (`1`, `-0.5`, `+INF`, `QNAN`).
    Float(f64),
    /// `c[0x0][0x210]`, `c[0x3][R2+0x8]`.
    Constant {
        bank: u32,
        address: Address,
        negated: bool,
        absolute: bool,
        suffixes: Vec<String>,
    },
    /// `[R2.64+0x10]`, `desc[UR6][R2.64]`.
    Memory(Address),
    /// `SR_TID.X`, `SR_CTAID.Y`, `SRZ`.
    Special(String),
    /// Anything else (`0x0` LUT names, texture handles, …), kept as text.
    Other(String),
}

impl Operand {
    pub fn reg(&self) -> Option<&RegOperand> {
        match self {
            Operand::Reg(r) => Some(r),
            _ => None,
        }
    }
}

impl Instruction {
    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x == m)
    }

    /// Whether this is a block barrier that holds the warp until its block arrives: `BAR.ARV`
    /// only signals arrival, every other form (`SYNC`, `RED`, plain `BAR`) waits.
    pub fn waits_at_barrier(&self) -> bool {
        self.opcode == "BAR" && !self.has_modifier("ARV")
    }

    /// The full mnemonic, `ISETP.GE.AND`.
    pub fn mnemonic(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(m);
        }
        s
    }

    /// A branch (`BRA`, `BRX`, `JMP`, `JMX`): its target, when direct.
    pub fn branch_target(&self) -> Option<u64> {
        if !matches!(self.opcode.as_str(), "BRA" | "JMP" | "CALL" | "JCAL") {
            return None;
        }
        self.operands.iter().rev().find_map(|o| match o {
            Operand::Int(v) if *v >= 0 => Some(*v as u64),
            _ => None,
        })
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{}{} ", if g.negated { "!" } else { "" }, g.reg)?;
        }
        write!(f, "{}", self.mnemonic())?;
        for (i, op) in self.operands.iter().enumerate() {
            write!(f, "{}{}", if i == 0 { " " } else { ", " }, op)?;
        }
        Ok(())
    }
}

fn write_reg(f: &mut fmt::Formatter<'_>, r: &RegOperand) -> fmt::Result {
    let (open, close) = if r.absolute { ("|", "|") } else { ("", "") };
    let prefix = if r.negated {
        "-"
    } else if r.inverted {
        if matches!(r.reg, Register::Predicate(_) | Register::UniformPredicate(_)) {
            "!"
        } else {
            "~"
        }
    } else {
        ""
    };
    write!(f, "{prefix}{open}{}", r.reg)?;
    for s in &r.suffixes {
        write!(f, ".{s}")?;
    }
    write!(f, "{close}")
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(b) = &self.base {
            parts.push(Operand::Reg(b.clone()).to_string());
        }
        if let Some(u) = &self.uniform {
            parts.push(Operand::Reg(u.clone()).to_string());
        }
        if self.offset != 0 || parts.is_empty() {
            if self.offset < 0 {
                parts.push(format!("-{:#x}", -self.offset));
            } else {
                parts.push(format!("{:#x}", self.offset));
            }
        }
        write!(f, "[{}]", parts.join("+").replace("+-", "-"))
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => write_reg(f, r),
            Operand::Int(v) if *v < 0 => write!(f, "-{:#x}", -v),
            Operand::Int(v) => write!(f, "{v:#x}"),
            Operand::Float(x) => write!(f, "{x:?}"),
            Operand::Constant {
                bank,
                address,
                negated,
                absolute,
                suffixes,
            } => {
                let (open, close) = if *absolute { ("|", "|") } else { ("", "") };
                write!(
                    f,
                    "{}{open}c[{bank:#x}]{address}",
                    if *negated { "-" } else { "" }
                )?;
                for s in suffixes {
                    write!(f, ".{s}")?;
                }
                write!(f, "{close}")
            }
            Operand::Memory(a) => {
                if let Some(d) = a.descriptor {
                    write!(f, "desc[{d}]")?;
                }
                write!(f, "{a}")
            }
            Operand::Special(s) | Operand::Other(s) => write!(f, "{s}"),
        }
    }
}

//! Architectures (sm_50 … sm_90) and the pipe each instruction uses on them.

use crate::sass::Instruction;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A compute capability, `sm_90` = 9.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    pub major: u8,
    pub minor: u8,
}

impl Arch {
    pub const MAXWELL: Arch = Arch { major: 5, minor: 2 };
    pub const HOPPER: Arch = Arch { major: 9, minor: 0 };

    /// Where the kernel's parameters start in constant bank 0: 0x140 on sm_5x–6x (seed 004,
    /// section 5.1.2), 0x160 on sm_7x–8x, 0x210 on sm_90.
    pub fn param_base(self) -> u64 {
        match self.major {
            0..=6 => 0x140,
            7 | 8 => 0x160,
            _ => 0x210,
        }
    }

    /// Issues two independent instructions of one warp together (Maxwell, Pascal).
    pub fn has_dual_issue(self) -> bool {
        self.major <= 6
    }

    /// Has the uniform datapath (`UR`, `UP` registers), sm_75 and later.
    pub fn has_uniform_datapath(self) -> bool {
        (self.major, self.minor) >= (7, 5)
    }

    /// `EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)` → sm_90.
    pub fn from_header_flags(flags: &str) -> Option<Arch> {
        let start = flags.find("EF_CUDA_SM")? + "EF_CUDA_SM".len();
        let digits: String = flags[start..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok().and_then(|n| Arch::from_number(n).ok())
    }

    fn from_number(n: u32) -> Result<Arch, String> {
        if !(50..=129).contains(&n) {
            return Err(format!("architecture sm_{n}: expected sm_50 … sm_90"));
        }
        Ok(Arch {
            major: (n / 10) as u8,
            minor: (n % 10) as u8,
        })
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)
    }
}

impl Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl FromStr for Arch {
    type Err = String;

    /// `sm_90`, `sm_90a`, `90`, `9.0`.
    fn from_str(text: &str) -> Result<Arch, String> {
        let t = text.trim();
        let t = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("SM"))
            .unwrap_or(t);
        let t = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let n = match t.split_once('.') {
            Some((major, minor)) => major
                .parse::<u32>()
                .ok()
                .zip(minor.parse::<u32>().ok())
                .map(|(a, b)| a * 10 + b),
            None => t.parse::<u32>().ok(),
        };
        n.ok_or_else(|| format!("architecture `{text}`: expected sm_50 … sm_90 (e.g. sm_52, sm_90)"))
            .and_then(Arch::from_number)
    }
}

/// The functional unit an instruction occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pipe {
    Fp32,
    Fp16,
    Int,
    Fp64,
    /// Special-function unit (`MUFU`) and the conversions that run there.
    Sfu,
    Tensor,
    GlobalLoad,
    GlobalStore,
    /// Atomics and reductions to global memory.
    GlobalAtomic,
    Shared,
    Local,
    /// Loads through the constant cache (`LDC`, `ULDC`).
    Constant,
    Texture,
    /// Branches, exits, barriers, convergence.
    Control,
    /// The uniform datapath (`UIADD3`, `UMOV`, …), sm_75+.
    Uniform,
    /// Moves between register files and special registers (`S2R`, `CS2R`, `NOP`, `SHFL`, …).
    Misc,
}

impl Pipe {
    pub const ALL: [Pipe; 16] = [
        Pipe::Fp32,
        Pipe::Fp16,
        Pipe::Int,
        Pipe::Fp64,
        Pipe::Sfu,
        Pipe::Tensor,
        Pipe::GlobalLoad,
        Pipe::GlobalStore,
        Pipe::GlobalAtomic,
        Pipe::Shared,
        Pipe::Local,
        Pipe::Constant,
        Pipe::Texture,
        Pipe::Control,
        Pipe::Uniform,
        Pipe::Misc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pipe::Fp32 => "fp32",
            Pipe::Fp16 => "fp16",
            Pipe::Int => "int",
            Pipe::Fp64 => "fp64",
            Pipe::Sfu => "sfu",
            Pipe::Tensor => "tensor",
            Pipe::GlobalLoad => "global_load",
            Pipe::GlobalStore => "global_store",
            Pipe::GlobalAtomic => "global_atomic",
            Pipe::Shared => "shared",
            Pipe::Local => "local",
            Pipe::Constant => "constant",
            Pipe::Texture => "texture",
            Pipe::Control => "control",
            Pipe::Uniform => "uniform",
            Pipe::Misc => "misc",
        }
    }

    pub fn is_global(self) -> bool {
        matches!(self, Pipe::GlobalLoad | Pipe::GlobalStore | Pipe::GlobalAtomic)
    }

    /// Counted by the thesis's `CUDACoreInstructions` (seed 004, section 5.2.3: "everything
    /// except memory accesses is processed by CUDA cores", less the double-precision, SFU
    /// and tensor units it names, and the uniform datapath that has no CUDA-core lanes).
    pub fn uses_cuda_cores(self) -> bool {
        matches!(
            self,
            Pipe::Fp32 | Pipe::Fp16 | Pipe::Int | Pipe::Control | Pipe::Misc
        )
    }
}

/// The pipe `instruction` uses on `arch`.
pub fn pipe(instruction: &Instruction, arch: Arch) -> Pipe {
    let op = instruction.opcode.as_str();
    if arch.has_uniform_datapath() && op.starts_with('U') && !matches!(op, "UNDEF") {
        // ULDC reads the constant cache; the rest (UIADD3, UMOV, ULOP3, USHF, …) is uniform.
        return if op == "ULDC" {
            Pipe::Constant
        } else {
            Pipe::Uniform
        };
    }
    match op {
        "FADD" | "FMUL" | "FFMA" | "FMNMX" | "FSET" | "FSETP" | "FSEL" | "FCHK" | "FSWZADD" | "FADD32I"
        | "FMUL32I" | "FFMA32I" | "FCMP" | "FMAX" | "FMIN" | "RRO" => Pipe::Fp32,
        "HADD2" | "HMUL2" | "HFMA2" | "HSET2" | "HSETP2" | "HMNMX2" | "HADD2_32I" | "HMUL2_32I"
        | "HFMA2_32I" => Pipe::Fp16,
        "DADD" | "DMUL" | "DFMA" | "DSETP" | "DSET" | "DMNMX" => Pipe::Fp64,
        "MUFU" => Pipe::Sfu,
        "F2I" | "I2F" | "F2F" | "I2I" | "FRND" | "F2FP" | "I2FP" | "F2IP" => {
            if is_double_conversion(instruction) {
                Pipe::Fp64
            } else if arch.major >= 7 && matches!(op, "I2FP" | "F2IP" | "F2FP") {
                Pipe::Int
            } else {
                Pipe::Sfu
            }
        }
        "HMMA" | "IMMA" | "DMMA" | "BMMA" | "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA" | "GMMA" => Pipe::Tensor,
        "LDG" | "LD" | "LDGSTS" | "LDGDEPBAR" => Pipe::GlobalLoad,
        "STG" | "ST" => Pipe::GlobalStore,
        "ATOMG" | "ATOM" | "RED" | "REDG" | "ATOMS_G" => Pipe::GlobalAtomic,
        "LDS" | "STS" | "ATOMS" | "LDSM" | "STSM" => Pipe::Shared,
        "LDL" | "STL" => Pipe::Local,
        "LDC" => Pipe::Constant,
        "TEX" | "TLD" | "TLD4" | "TXQ" | "TMML" | "TXD" | "TEXS" | "TLDS" | "TLD4S" | "SULD" | "SUST"
        | "SUATOM" | "SURED" => Pipe::Texture,
        "BRA" | "BRX" | "JMP" | "JMX" | "EXIT" | "RET" | "CALL" | "JCAL" | "BAR" | "BSSY" | "BSYNC"
        | "BREAK" | "BPT" | "WARPSYNC" | "SYNC" | "SSY" | "PBK" | "PCNT" | "CONT" | "BRK" | "KIL"
        | "KILL" | "YIELD" | "NANOSLEEP" | "MEMBAR" | "DEPBAR" | "ERRBAR" | "CCTL" | "CCTLL" | "ARRIVES"
        | "SYNCS" | "ELECT" | "BMOV" | "WARPGROUP" | "ACQBULK" | "UCGABAR_ARV" | "UCGABAR_WAIT" => {
            Pipe::Control
        }
        "S2R" | "CS2R" | "S2UR" | "NOP" | "SHFL" | "VOTE" | "VOTEU" | "MATCH" | "REDUX" | "B2R" | "R2B"
        | "R2UR" | "P2R" | "R2P" | "CSMTEST" | "GETLMEMBASE" | "SETLMEMBASE" | "PMTRIG" | "LEPC" => {
            Pipe::Misc
        }
        "XMAD" | "IMAD" | "IMUL" | "IMADSP" | "IMUL32I" | "IMAD32I" | "IMADX" | "IDP" | "IDP4A" | "IDP2A"
        | "IADD" | "IADD3" | "IADD32I" | "ISCADD" | "ISCADD32I" | "ISETP" | "ISET" | "ICMP" | "IMNMX"
        | "IABS" | "LOP" | "LOP3" | "LOP32I" | "SHL" | "SHR" | "SHF" | "LEA" | "BFE" | "BFI" | "FLO"
        | "POPC" | "BREV" | "SEL" | "MOV" | "MOV32I" | "PRMT" | "PSETP" | "PSET" | "PLOP3" | "ISAD"
        | "VABSDIFF" | "VABSDIFF4" | "VMNMX" | "VADD" | "VSET" | "VSETP" | "SGXT" | "LEA_HI" | "IMNMX3"
        | "VIMNMX" | "VIADD" | "VIADDMNMX" | "BMSK" | "QSPC" => Pipe::Int,
        _ => Pipe::Misc,
    }
}

fn is_double_conversion(instruction: &Instruction) -> bool {
    instruction.modifiers.iter().any(|m| m == "F64")
}

/// Memory spaces of loads and stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    Global,
    Shared,
    Local,
    Constant,
}

/// The memory space `instruction` accesses, if it is a load or store.
pub fn memory_space(instruction: &Instruction, arch: Arch) -> Option<Space> {
    match pipe(instruction, arch) {
        p if p.is_global() => Some(Space::Global),
        Pipe::Shared => Some(Space::Shared),
        Pipe::Local => Some(Space::Local),
        Pipe::Constant => Some(Space::Constant),
        _ => None,
    }
}

/// Bytes per thread that a memory instruction moves (`.64` → 8, `.128` → 16, `.U8` → 1).
pub fn access_bytes(instruction: &Instruction) -> u32 {
    let mut bytes = 4;
    for m in &instruction.modifiers {
        bytes = match m.as_str() {
            "U8" | "S8" => 1,
            "U16" | "S16" => 2,
            "64" => 8,
            "128" => 16,
            _ => bytes,
        };
    }
    bytes
}

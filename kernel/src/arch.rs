//! The pipe each instruction uses on each architecture (sm_50 … sm_90), and the memory
//! space and width of its accesses. [`Arch`] itself lives in
//! [`capability`](crate::capability), re-exported here.

pub use crate::capability::{Arch, ArchChoice};
use crate::sass::Instruction;
use serde::Serialize;

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

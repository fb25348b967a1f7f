//! Compute capabilities (sm_50 … sm_90): what a listing is compiled for, read from
//! `code for sm_XX`, `.headerflags` or the user's `--arch`, and the facts of each that the
//! parser and the pipe tables ask about. The listing (`sass`) and the pipes (`arch`) both
//! import it.

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

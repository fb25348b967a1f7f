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

/// The architecture a listing is analysed and timed for, and what the user is told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchChoice {
    pub arch: Arch,
    /// Mismatches let through because the user named the architecture (`--arch`).
    pub warnings: Vec<String>,
    /// Where the architecture came from, when the listing does not say.
    pub notes: Vec<String>,
}

impl Arch {
    /// Whether SASS compiled for `self` runs on a GPU of compute capability `gpu`: SASS is
    /// binary-compatible within one major, from a minor to the later ones (CUDA C
    /// Programming Guide, "Binary Compatibility").
    pub fn runs_on(self, gpu: Arch) -> bool {
        self.major == gpu.major && self.minor <= gpu.minor
    }

    /// The architecture to analyse and time a kernel for: the user's `explicit` one (with a
    /// warning for each mismatch with the listing or the GPU), else the `listing`'s (refused
    /// when it cannot run on the GPU), else the `gpu`'s compute capability. `gpu` is the
    /// GPU's name and compute capability; `None` when nothing names one.
    pub fn choose(
        explicit: Option<Arch>,
        listing: Option<Arch>,
        gpu: Option<(&str, Arch)>,
    ) -> Result<Option<ArchChoice>, String> {
        let mut warnings = Vec::new();
        let mut notes = Vec::new();
        let arch = match (explicit, listing, gpu) {
            (Some(a), _, _) => {
                if let Some(l) = listing.filter(|&l| l != a) {
                    warnings.push(format!("--arch {a} overrides the listing's {l}"));
                }
                if let Some((name, g)) = gpu.filter(|&(_, g)| !a.runs_on(g)) {
                    warnings.push(format!(
                        "--arch {a}: {name} is compute capability {}.{} ({g}); SASS for {a} does not run on it, timed anyway",
                        g.major, g.minor
                    ));
                }
                a
            }
            (None, Some(l), Some((name, g))) if !l.runs_on(g) => {
                return Err(format!(
                    "the listing is compiled for {l}, but {name} is compute capability {}.{} ({g}): SASS for {l} does not run on it. Give a listing compiled for {g}, another GPU, or --arch to time it anyway",
                    g.major, g.minor
                ))
            }
            (None, Some(l), _) => l,
            (None, None, Some((name, g))) => {
                notes.push(format!(
                    "the listing names no architecture: taken as {g}, the compute capability of {name}"
                ));
                g
            }
            (None, None, None) => return Ok(None),
        };
        Ok(Some(ArchChoice {
            arch,
            warnings,
            notes,
        }))
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

#[cfg(test)]
mod tests {
    use super::*;

    const SM52: Arch = Arch::MAXWELL;
    const SM90: Arch = Arch::HOPPER;

    #[test]
    fn the_listing_then_the_gpu_give_the_architecture() {
        let gtx970 = Some(("GTX 970 - gajger", SM52));
        let c = Arch::choose(None, None, gtx970).unwrap().unwrap();
        assert_eq!(c.arch, SM52);
        assert!(c.notes[0].contains("GTX 970 - gajger") && c.warnings.is_empty());
        let c = Arch::choose(None, Some(SM52), gtx970).unwrap().unwrap();
        assert_eq!((c.arch, c.notes.len()), (SM52, 0));
        assert_eq!(Arch::choose(None, None, None), Ok(None));
        assert!(Arch { major: 5, minor: 0 }.runs_on(SM52) && !SM52.runs_on(Arch { major: 5, minor: 0 }));
    }

    #[test]
    fn a_mismatch_is_refused_and_an_explicit_one_warned() {
        let gtx970 = Some(("GTX 970 - gajger", SM52));
        let e = Arch::choose(None, Some(SM90), gtx970).expect_err("sm_90 on a GTX 970");
        assert!(
            e.contains("sm_90") && e.contains("GTX 970 - gajger is compute capability 5.2"),
            "{e}"
        );
        let c = Arch::choose(Some(SM90), Some(SM52), gtx970).unwrap().unwrap();
        assert_eq!(c.arch, SM90);
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(c.warnings[1].contains("does not run on it"), "{:?}", c.warnings);
    }
}

//! Why a run fails.

use std::fmt;

use crate::platform::PlatformError;

/// Why a run failed.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    Platform(PlatformError),
    /// Every unfinished process waits in receive and nothing is pending.
    Deadlock {
        time: f64,
        blocked: Vec<String>,
    },
    Process {
        who: String,
        time: f64,
        message: String,
    },
    InvalidRequest {
        who: String,
        message: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Platform(e) => write!(f, "{e}"),
            SimError::Deadlock { time, blocked } => {
                write!(
                    f,
                    "deadlock at t = {time} s: every unfinished process waits and no message is on its way:"
                )?;
                for b in blocked {
                    write!(f, "\n  {b}")?;
                }
                Ok(())
            }
            SimError::Process { who, time, message } => write!(f, "{who} failed at t = {time} s: {message}"),
            SimError::InvalidRequest { who, message } => write!(f, "{who}: {message}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<PlatformError> for SimError {
    fn from(e: PlatformError) -> Self {
        SimError::Platform(e)
    }
}

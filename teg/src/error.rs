//! TEG's error: a message, as the kernel analyser's errors carry theirs.

/// What went wrong, in words a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub message: String,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }
}

impl From<hetsim_kernel::Error> for Error {
    fn from(e: hetsim_kernel::Error) -> Error {
        Error::new(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

//! The run model of the service: what a submission becomes once checked ([`RunSpec`]) and
//! the statuses a run goes through ([`RunStatus`]).

mod spec;
mod status;

pub use spec::{new_id, RunSpec, SpecError, Submission};
pub use status::RunStatus;

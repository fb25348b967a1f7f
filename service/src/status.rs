//! A run's status and the transitions between statuses: the one table every query that
//! changes a status is built from.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Stored and waiting for a worker.
    Queued,
    /// Claimed by a worker (again after a worker that died with it).
    Running,
    /// Finished with a result.
    Done,
    /// Finished with an error: the script's, a sandbox limit's, or the delivery limit's.
    Failed,
    /// Stopped by a user before it finished.
    Cancelled,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Done,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether no transition leaves `self` (done, failed, cancelled).
    pub fn is_final(self) -> bool {
        !Self::ALL.into_iter().any(|next| self.can_become(next))
    }

    /// The statuses a run may reach `self` from.
    pub fn sources(self) -> &'static [RunStatus] {
        use RunStatus::*;
        match self {
            // A run whose worker's lease expired goes back to the queue (the reaper).
            Queued => &[Running],
            // Claimed: only a queued run (one whose worker died waits for the reaper).
            Running => &[Queued],
            Done => &[Running],
            // Fails while running, or before: its delivery limit spent, its message
            // dead-lettered.
            Failed => &[Queued, Running],
            Cancelled => &[Queued, Running],
        }
    }

    pub fn can_become(self, next: RunStatus) -> bool {
        next.sources().contains(&self)
    }

    /// `'a', 'b'`: the sources of `self` for a `status IN (…)` clause.
    pub fn sql_sources(self) -> String {
        self.sources()
            .iter()
            .map(|s| format!("'{}'", s.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::RunStatus::{self, *};

    #[test]
    fn final_statuses_lead_nowhere() {
        let finals: Vec<RunStatus> = RunStatus::ALL.into_iter().filter(|s| s.is_final()).collect();
        assert_eq!(finals, [Done, Failed, Cancelled]);
    }

    #[test]
    fn a_run_finishes_only_from_running_and_is_cancelled_before_it_ends() {
        assert!(Running.can_become(Done) && !Queued.can_become(Done));
        assert!(Queued.can_become(Cancelled) && Running.can_become(Cancelled));
        assert_eq!(Cancelled.sql_sources(), "'queued', 'running'");
    }

    #[test]
    fn names_round_trip() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(RunStatus::parse("finished"), None);
    }
}

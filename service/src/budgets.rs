//! What one run may take of its worker: a lease it must keep renewing, wall time and memory.
//! docs/SERVER.md ("Leases and budgets") gives the defaults and how they agree with the
//! broker.

use std::time::Duration;

/// The budgets of every run a worker takes (`serve` and `worker` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBudgets {
    /// How long a claim holds without renewal; renewed every third of it. A worker frozen
    /// or cut off from the database longer than this loses its run to the reaper.
    pub lease: Duration,
    /// Wall time a run may take; past it the run fails naming the limit.
    pub max_run_time: Duration,
    /// Bytes a run may hold (`hetsim_scripting::memory`); past it the run fails naming the
    /// limit. `None`: unbounded.
    pub max_run_memory: Option<ByteSize>,
}

impl RunBudgets {
    pub const DEFAULT_LEASE_SECONDS: u64 = 30;
    /// Below RabbitMQ's default `consumer_timeout` (30 min): the broker never gives a
    /// message of a run within its budget to another consumer while its worker acks late.
    pub const DEFAULT_MAX_RUN_SECONDS: u64 = 25 * 60;
    pub const DEFAULT_MAX_RUN_MEMORY: ByteSize = ByteSize(8 << 30);

    /// How often a worker renews its lease: three renewals fit in one lease, so one lost
    /// write does not lose the run.
    pub fn renew_every(&self) -> Duration {
        self.lease / 3
    }
}

impl Default for RunBudgets {
    fn default() -> Self {
        RunBudgets {
            lease: Duration::from_secs(Self::DEFAULT_LEASE_SECONDS),
            max_run_time: Duration::from_secs(Self::DEFAULT_MAX_RUN_SECONDS),
            max_run_memory: Some(Self::DEFAULT_MAX_RUN_MEMORY),
        }
    }
}

/// A number of bytes, written as a whole number with an optional binary unit: `65536`,
/// `512KiB`, `64MiB`, `8GiB` (also `K`, `M`, `G`, `T`, read as binary units).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

const UNITS: [(&str, u32); 4] = [("K", 10), ("M", 20), ("G", 30), ("T", 40)];

impl std::str::FromStr for ByteSize {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let expected = || format!("{text:?}: expected a size such as 65536, 512MiB or 8GiB");
        let text = text.trim();
        let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(digits);
        let number: u64 = number.parse().map_err(|_| expected())?;
        let unit = unit.trim().trim_end_matches(['B', 'b']);
        let unit = unit.strip_suffix('i').unwrap_or(unit);
        let shift = if unit.is_empty() {
            0
        } else {
            UNITS
                .iter()
                .find(|(name, _)| unit.eq_ignore_ascii_case(name))
                .map(|&(_, shift)| shift)
                .ok_or_else(expected)?
        };
        number
            .checked_mul(1 << shift)
            .filter(|&bytes| bytes > 0)
            .map(ByteSize)
            .ok_or_else(expected)
    }
}

impl std::fmt::Display for ByteSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = UNITS.iter().rev().find(|&&(_, shift)| self.0 % (1 << shift) == 0);
        match unit {
            Some((name, shift)) => write!(f, "{}{name}iB", self.0 >> shift),
            None => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_binary_units_and_print_back() {
        for (text, bytes) in [
            ("65536", 65536),
            ("512KiB", 512 << 10),
            ("64MiB", 64 << 20),
            ("8GiB", 8 << 30),
            ("2G", 2 << 30),
            ("3 mb", 3 << 20),
        ] {
            assert_eq!(text.parse::<ByteSize>(), Ok(ByteSize(bytes)), "{text}");
        }
        assert_eq!(ByteSize(8 << 30).to_string(), "8GiB");
        assert_eq!(ByteSize(1000).to_string(), "1000");
        for bad in ["", "0", "MiB", "8 PiB", "-1", "99999999999T"] {
            let error = bad.parse::<ByteSize>().unwrap_err();
            assert!(error.contains("8GiB"), "{error}");
        }
    }

    #[test]
    fn renewals_fit_three_times_in_a_lease_and_runs_end_before_the_broker_gives_up() {
        let budgets = RunBudgets::default();
        assert_eq!(budgets.renew_every() * 3, budgets.lease);
        // RabbitMQ's default consumer_timeout: 1,800,000 ms.
        assert!(budgets.max_run_time < Duration::from_secs(1800));
    }
}

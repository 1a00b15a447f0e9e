//! Simulated time: integer picoseconds.

/// A point in simulated time, or a duration: picoseconds since the start of
/// the run. `u64` picoseconds reach 213 days.
pub type Time = u64;

/// Picoseconds per nanosecond.
pub const NS: Time = 1_000;
/// Picoseconds per microsecond.
pub const US: Time = 1_000_000;

/// A clock domain: a period in whole picoseconds.
///
/// Components of different clocks share the picosecond timeline; a clock
/// whose period is not a whole number of picoseconds (2100 MHz: 476.19 ps)
/// is rounded to the nearest picosecond (476 ps, 0.04% fast), the same
/// rounding for every component of that clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    period: Time,
}

impl Clock {
    /// A clock of `mhz` megahertz; `None` for 0 or a clock above 1 THz.
    pub fn from_mhz(mhz: u32) -> Option<Clock> {
        if mhz == 0 || mhz > 1_000_000 {
            return None;
        }
        let mhz = u64::from(mhz);
        Some(Clock {
            period: (1_000_000 + mhz / 2) / mhz,
        })
    }

    /// A clock of the given period; `None` for 0.
    pub fn from_period(period: Time) -> Option<Clock> {
        (period > 0).then_some(Clock { period })
    }

    /// The period in picoseconds.
    pub fn period(self) -> Time {
        self.period
    }

    /// The duration of `n` cycles.
    pub fn cycles(self, n: u64) -> Time {
        n * self.period
    }

    /// The number of whole cycles completed at `t`.
    pub fn cycle_at(self, t: Time) -> u64 {
        t / self.period
    }

    /// The first clock edge at or after `t`.
    pub fn next_edge(self, t: Time) -> Time {
        t.div_ceil(self.period) * self.period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_rounds_to_picoseconds() {
        assert_eq!(Clock::from_mhz(2100).unwrap().period(), 476);
        assert_eq!(Clock::from_mhz(1000).unwrap().period(), 1000);
        assert_eq!(Clock::from_mhz(1300).unwrap().period(), 769);
        assert!(Clock::from_mhz(0).is_none());
        let c = Clock::from_period(500).unwrap();
        assert_eq!(c.cycles(3), 1500);
        assert_eq!(c.cycle_at(1499), 2);
        assert_eq!(c.next_edge(1001), 1500);
        assert_eq!(c.next_edge(1000), 1000);
    }
}

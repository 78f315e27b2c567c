//! Unix seconds as calendar dates (UTC), written once: the proleptic Gregorian date of a day
//! count is Howard Hinnant's `civil_from_days`, without a date library.

/// A moment in UTC, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u64,
    pub minute: u64,
    pub second: u64,
}

impl UtcTime {
    /// The moment `secs` seconds after 1970-01-01T00:00:00Z.
    pub fn from_unix(secs: u64) -> Self {
        let days = i64::try_from(secs / 86_400).unwrap_or(0);
        let rem = secs % 86_400;
        let (year, month, day) = civil_from_days(days);
        UtcTime {
            year,
            month,
            day,
            hour: rem / 3_600,
            minute: rem % 3_600 / 60,
            second: rem % 60,
        }
    }

    /// Now, by the system clock (the epoch if the clock is before it).
    pub fn now() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Self::from_unix(secs)
    }

    /// ISO 8601: `YYYY-MM-DDTHH:MM:SSZ`.
    pub fn iso8601(&self) -> String {
        self.written('T', "Z")
    }

    /// As Zotero writes `accessDate`: `YYYY-MM-DD HH:MM:SS`.
    pub fn zotero(&self) -> String {
        self.written(' ', "")
    }

    fn written(&self, between: char, zone: &str) -> String {
        format!(
            "{:04}-{:02}-{:02}{between}{:02}:{:02}:{:02}{zone}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m as u32, d as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_781), (2026, 11, 24));
        assert_eq!(UtcTime::now().zotero().len(), 19);
    }

    #[test]
    fn seconds_are_written_both_ways() {
        let t = UtcTime::from_unix(1_709_251_199); // the last second of 29 February 2024
        assert_eq!(t.iso8601(), "2024-02-29T23:59:59Z");
        assert_eq!(t.zotero(), "2024-02-29 23:59:59");
        assert_eq!(UtcTime::from_unix(0).iso8601(), "1970-01-01T00:00:00Z");
        // The index's last update, as the status tool answered it before it used this.
        assert_eq!(
            UtcTime::from_unix(1_700_000_000).iso8601(),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            UtcTime::from_unix(951_782_400).iso8601(),
            "2000-02-29T00:00:00Z"
        );
    }
}

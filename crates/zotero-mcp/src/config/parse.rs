//! The readers every part of the configuration shares: one variable, its default, and the
//! error that names it.

use std::time::Duration;

use super::ConfigError;

/// How a part reads a variable: trimmed, `None` when unset or empty.
pub(super) type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

pub(super) fn parse_bool(get: Vars, var: &'static str, default: bool) -> Result<bool, ConfigError> {
    match get(var) {
        None => Ok(default),
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(ConfigError {
                var,
                value: v,
                expected: "1 or 0 (true/false, yes/no, on/off)".into(),
            }),
        },
    }
}

pub(super) fn parse_num<T: std::str::FromStr>(
    get: Vars,
    var: &'static str,
    default: T,
) -> Result<T, ConfigError> {
    match get(var) {
        None => Ok(default),
        Some(v) => v.parse::<T>().map_err(|_| ConfigError {
            var,
            value: v,
            expected: "a non-negative whole number".into(),
        }),
    }
}

/// A whole number from 1 to `max`.
pub(super) fn parse_count(
    get: Vars,
    var: &'static str,
    default: usize,
    max: usize,
) -> Result<usize, ConfigError> {
    match get(var) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| ConfigError {
                var,
                value: v.clone(),
                expected: format!("a whole number from 1 to {max}"),
            }),
    }
}

/// Seconds as [`parse_secs`] reads them, but not zero.
pub(super) fn parse_positive_secs(
    get: Vars,
    var: &'static str,
    default: f64,
) -> Result<Duration, ConfigError> {
    let secs = parse_secs(get, var, default)?;
    if secs.is_zero() {
        return Err(ConfigError {
            var,
            value: "0".into(),
            expected: "a positive number of seconds, such as 0.5".into(),
        });
    }
    Ok(secs)
}

pub(super) fn parse_secs(
    get: Vars,
    var: &'static str,
    default: f64,
) -> Result<Duration, ConfigError> {
    let secs = match get(var) {
        None => default,
        Some(v) => match v.parse::<f64>() {
            Ok(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => s,
            _ => {
                return Err(ConfigError {
                    var,
                    value: v,
                    expected: "a number of seconds between 0 and 86400, such as 0.5".into(),
                })
            }
        },
    };
    Ok(Duration::from_secs_f64(secs))
}

/// An `http://` or `https://` root, without a trailing slash; `default` when unset.
pub(super) fn parse_base_or(
    get: Vars,
    var: &'static str,
    default: &str,
) -> Result<String, ConfigError> {
    match get(var) {
        None => Ok(default.to_string()),
        Some(v) => parse_base(var, &v),
    }
}

pub(super) fn parse_base(var: &'static str, v: &str) -> Result<String, ConfigError> {
    let lower = v.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.starts_with('/') && !v.contains(['?', '#']) => {
            Ok(v.trim_end_matches('/').to_string())
        }
        _ => Err(ConfigError {
            var,
            value: v.to_string(),
            expected: "an http:// or https:// URL such as https://api.zotero.org".into(),
        }),
    }
}

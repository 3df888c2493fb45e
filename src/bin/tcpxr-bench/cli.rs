//! The bench's command line: every subcommand declares its options, and anything else (an unknown
//! flag, a stray argument, a missing or malformed value, a value out of range) is a usage error
//! that `main` reports on stderr with exit code 2. Nothing here panics on user input.

/// What went wrong with the command line, as the user should read it.
pub type Usage = String;

/// One option a subcommand takes.
pub struct Opt {
    pub name: &'static str,
    /// Takes a value (`--name V` or `--name=V`); otherwise it is a switch.
    pub value: bool,
}

pub const fn value(name: &'static str) -> Opt {
    Opt { name, value: true }
}

pub const fn switch(name: &'static str) -> Opt {
    Opt { name, value: false }
}

/// The options given on a command line, checked against what the subcommand takes.
pub struct Args {
    given: Vec<(&'static str, Option<String>)>,
}

impl Args {
    /// Parses `args` for `cmd` (the subcommand, as messages name it), which takes `known`.
    pub fn parse(cmd: &str, args: &[String], known: &[Opt]) -> Result<Args, Usage> {
        let mut given: Vec<(&'static str, Option<String>)> = Vec::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            let Some(opt) = known.iter().find(|o| o.name == name) else {
                let names: Vec<&str> = known.iter().map(|o| o.name).collect();
                return Err(if arg.starts_with('-') {
                    format!("unknown option {name} ({cmd} takes {})", names.join(" "))
                } else {
                    format!("unexpected argument {arg:?} ({cmd} takes {})", names.join(" "))
                });
            };
            if given.iter().any(|(n, _)| *n == opt.name) {
                return Err(format!("{} given twice", opt.name));
            }
            let v = match (opt.value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => match it.next() {
                    Some(v) => Some(v.clone()),
                    None => return Err(format!("{} needs a value", opt.name)),
                },
                (false, None) => None,
                (false, Some(_)) => return Err(format!("{} takes no value", opt.name)),
            };
            given.push((opt.name, v));
        }
        Ok(Args { given })
    }

    /// Whether switch `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| *n == name)
    }

    /// The value of option `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The value of `name` read by `read` (the default's text when it is not given); the error
    /// names the option, the value and what `read` accepts.
    pub fn read<T>(&self, name: &str, default: &str, read: impl Fn(&str) -> Result<T, String>) -> Result<T, Usage> {
        let v = self.get(name).unwrap_or(default);
        read(v).map_err(|accepted| format!("{name} {v:?}: accepted {accepted}"))
    }
}

/// Largest message the bench moves: NCCL's test() reports sizes as a C int.
pub const MAX_SIZE: usize = 1 << 30;

/// A byte count: decimal digits with an optional binary K, M or G suffix, within lo..=hi.
pub fn size_in(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    let accepted = || format!("a byte count {}-{} (K/M/G suffixes allowed)", human(lo), human(hi));
    let s = s.trim();
    let (digits, shift) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 10),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 20),
        Some(b'g' | b'G') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(accepted());
    }
    let n = digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(accepted)?;
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(accepted())
    }
}

/// A message size for the sweeps: 1 B - 1 GiB.
pub fn size(s: &str) -> Result<usize, String> {
    size_in(s, 1, MAX_SIZE)
}

/// `MIN:MAX` (sizes doubling from MIN up to MAX) or one size.
pub fn size_range(s: &str) -> Result<Vec<usize>, String> {
    let accepted = "MIN:MAX with 1 <= MIN <= MAX <= 1G (K/M/G suffixes allowed), or one size";
    let (lo, hi) = s.split_once(':').unwrap_or((s, s));
    let (lo, hi) = match (size(lo), size(hi)) {
        (Ok(lo), Ok(hi)) if lo <= hi => (lo, hi),
        _ => return Err(accepted.into()),
    };
    let mut v = vec![];
    let mut n = lo;
    while n <= hi {
        v.push(n);
        n *= 2;
    }
    Ok(v)
}

/// A comma-separated, non-empty list of items read by `item`.
pub fn list<T>(s: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    let v: Result<Vec<T>, String> = s.split(',').map(|x| item(x.trim())).collect();
    match v {
        Ok(v) if !v.is_empty() => Ok(v),
        Ok(_) => Err("a non-empty comma-separated list".into()),
        Err(e) => Err(format!("a comma-separated list, each {e}")),
    }
}

/// A whole number within lo..=hi.
pub fn int_in(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("a whole number {lo}-{hi}")),
    }
}

/// A number of seconds: finite, above 0, at most `hi`.
pub fn seconds_up_to(s: &str, hi: f64) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= hi => Ok(x),
        _ => Err(format!("seconds, more than 0 and at most {hi}")),
    }
}

/// One of `choices`.
pub fn one_of<'a>(s: &str, choices: &[&'a str]) -> Result<&'a str, String> {
    choices
        .iter()
        .find(|c| **c == s.trim())
        .copied()
        .ok_or_else(|| format!("one of {}", choices.join(", ")))
}

fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{}G", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}M", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}K", n >> 10),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const KNOWN: &[Opt] = &[value("--sizes"), switch("--no-baseline")];

    #[test]
    fn unknown_flags_stray_arguments_and_missing_values_are_refused() {
        for bad in [
            &["--bogus"][..],
            &["extra"],
            &["--sizes"],
            &["--no-baseline=1"],
            &["--sizes", "1K", "--sizes", "2K"],
        ] {
            assert!(Args::parse("t", &args(bad), KNOWN).is_err(), "{bad:?}");
        }
        let a = Args::parse("t", &args(&["--sizes=4K:8K", "--no-baseline"]), KNOWN).unwrap();
        assert_eq!(a.get("--sizes"), Some("4K:8K"));
        assert!(a.has("--no-baseline"));
    }

    #[test]
    fn values_are_checked() {
        assert_eq!(size_range("4K:16K").unwrap(), vec![4096, 8192, 16384]);
        assert_eq!(size_range("1M").unwrap(), vec![1 << 20]);
        for bad in [
            "abc",
            "8K:4K",
            "0:4K",
            "4K:",
            ":4K",
            "2G",
            "1K:2G",
            "99999999999999999999G",
            "-1",
        ] {
            assert!(size_range(bad).is_err(), "{bad}");
        }
        assert_eq!(list("1, 2,4", |s| int_in(s, 1, 16)).unwrap(), vec![1, 2, 4]);
        assert!(list("1,abc", |s| int_in(s, 1, 16)).is_err());
        assert!(list("0", |s| int_in(s, 1, 16)).is_err());
        assert!(list("", |s| int_in(s, 1, 16)).is_err());
        for bad in ["-1", "0", "abc", "nan", "inf", "1e9"] {
            assert!(seconds_up_to(bad, 3600.0).is_err(), "{bad}");
        }
        assert_eq!(seconds_up_to("0.25", 3600.0).unwrap(), 0.25);
        assert_eq!(one_of("send", &["recv", "send"]).unwrap(), "send");
        assert!(one_of("both", &["recv", "send"]).is_err());
    }
}

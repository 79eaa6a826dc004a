//! A minimal JSON writer over a `String`: objects and arrays are written through closures, so a record is
//! always well formed (every object and array closed, commas between members), and strings are escaped
//! (RFC 8259 §7: `"`, `\` and the control characters). qlog needs nothing more, and it keeps serde out of
//! the core's dependencies.

use std::fmt::Write as _;
use std::time::Duration;

/// The members of a JSON object being written.
pub(crate) struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

/// The elements of a JSON array being written.
pub(crate) struct Arr<'a> {
    out: &'a mut String,
    first: bool,
}

/// Writes one JSON object to `out`.
pub(crate) fn object(out: &mut String, f: impl FnOnce(&mut Obj<'_>)) {
    out.push('{');
    f(&mut Obj { out, first: true });
    out.push('}');
}

fn array(out: &mut String, f: impl FnOnce(&mut Arr<'_>)) {
    out.push('[');
    f(&mut Arr { out, first: true });
    out.push(']');
}

/// Writes `s` as a JSON string.
fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `bytes` as a JSON string of lowercase hex digits.
fn hex(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('"');
}

/// Writes a float; JSON has no NaN or infinity, so those become 0.
fn float(out: &mut String, v: f64) {
    if v.is_finite() {
        let _ = write!(out, "{v}");
    } else {
        out.push('0');
    }
}

/// Milliseconds, as qlog writes durations.
pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Obj<'_> {
    fn key(&mut self, k: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        string(self.out, k);
        self.out.push(':');
    }

    /// A string member.
    pub(crate) fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        string(self.out, v);
    }

    /// A string member of hex digits.
    pub(crate) fn hex(&mut self, k: &str, v: &[u8]) {
        self.key(k);
        hex(self.out, v);
    }

    /// An integer member.
    pub(crate) fn u64(&mut self, k: &str, v: u64) {
        self.key(k);
        let _ = write!(self.out, "{v}");
    }

    /// A number member.
    pub(crate) fn f64(&mut self, k: &str, v: f64) {
        self.key(k);
        float(self.out, v);
    }

    /// A duration member in milliseconds.
    pub(crate) fn ms(&mut self, k: &str, v: Duration) {
        self.f64(k, millis(v));
    }

    /// A boolean member.
    pub(crate) fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.out.push_str(if v { "true" } else { "false" });
    }

    /// A nested object member.
    pub(crate) fn obj(&mut self, k: &str, f: impl FnOnce(&mut Obj<'_>)) {
        self.key(k);
        object(self.out, f);
    }

    /// An array member.
    pub(crate) fn arr(&mut self, k: &str, f: impl FnOnce(&mut Arr<'_>)) {
        self.key(k);
        array(self.out, f);
    }
}

impl Arr<'_> {
    fn sep(&mut self) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
    }

    /// An object element.
    pub(crate) fn obj(&mut self, f: impl FnOnce(&mut Obj<'_>)) {
        self.sep();
        object(self.out, f);
    }

    /// An integer element.
    pub(crate) fn u64(&mut self, v: u64) {
        self.sep();
        let _ = write!(self.out, "{v}");
    }

    /// A string element.
    pub(crate) fn str(&mut self, v: &str) {
        self.sep();
        string(self.out, v);
    }

    /// A nested array element.
    pub(crate) fn arr(&mut self, f: impl FnOnce(&mut Arr<'_>)) {
        self.sep();
        array(self.out, f);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn strings_are_escaped_and_records_parse() {
        let mut s = String::new();
        object(&mut s, |o| {
            o.str("a", "q\"uote\\ back\nline\u{1}\u{7f}é");
            o.u64("n", 7);
            o.f64("f", 1.5);
            o.f64("nan", f64::NAN);
            o.bool("b", true);
            o.hex("h", &[0xab, 0x01]);
            o.arr("l", |a| {
                a.u64(1);
                a.str("x");
                a.arr(|a| a.u64(2));
                a.obj(|o| o.ms("t", Duration::from_micros(1500)));
            });
            o.obj("e", |_| {});
        });
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["a"], "q\"uote\\ back\nline\u{1}\u{7f}é");
        assert_eq!(v["n"], 7);
        assert_eq!(v["f"], 1.5);
        assert_eq!(v["nan"], 0);
        assert_eq!(v["h"], "ab01");
        assert_eq!(v["l"][3]["t"], 1.5);
        assert_eq!(v["e"], serde_json::json!({}));
    }
}

//! How our documents write numbers: every floating-point value to [`SIGNIFICANT_DIGITS`]
//! significant digits.
//!
//! A measured sample carries a few significant digits of information (run-to-run spreads are
//! 10^-4 to 10^-2 of the value); the other digits of its full `f64` representation are noise
//! that doubles the size of a compressed baseline or corpus run. Seven digits (a part in 10^7)
//! keep every value far below any spread a verdict uses, and rounding twice gives the same
//! text, so documents rewritten by gpubench stay byte-identical.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// Significant digits of every floating-point number gpubench writes to its documents.
pub const SIGNIFICANT_DIGITS: usize = 7;

/// `x` rounded to [`SIGNIFICANT_DIGITS`] significant digits. Whole numbers (byte sizes, cycle
/// counts, clocks in kHz) stay exact, and non-finite values and zero are as they are.
pub fn round_significant(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 || (x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15) {
        return x;
    }
    format!("{:.*e}", SIGNIFICANT_DIGITS - 1, x).parse().unwrap_or(x)
}

/// `value` as JSON, indented or on one line, with every float rounded by [`round_significant`].
pub fn to_json_bytes<T: Serialize + ?Sized>(value: &T, pretty: bool) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    if pretty {
        value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, Rounded(PrettyFormatter::new())))?;
    } else {
        value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, Rounded(CompactFormatter)))?;
    }
    Ok(out)
}

/// A formatter that lays out like `F` and rounds floats.
struct Rounded<F>(F);

macro_rules! delegate {
    ($($name:ident),*) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.$name(w)
        }
    )*};
}

impl<F: Formatter> Formatter for Rounded<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        self.0.write_f64(w, round_significant(value))
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.0.write_f64(w, round_significant(f64::from(value)))
    }

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    delegate!(
        begin_array,
        end_array,
        end_array_value,
        begin_object,
        end_object,
        end_object_key,
        begin_object_value,
        end_object_value
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_seven_significant_digits_and_nothing_else_changes() {
        assert_eq!(round_significant(3198.123456789), 3198.123);
        assert_eq!(round_significant(0.000123456789), 0.0001234568);
        assert_eq!(round_significant(-2.5e-12), -2.5e-12);
        assert_eq!(round_significant(1980.0), 1980.0);
        assert_eq!(round_significant(33554432.0), 33554432.0, "whole numbers stay exact");
        assert_eq!(round_significant(391488484.0), 391488484.0);
        assert!(round_significant(f64::NAN).is_nan());
        let v = serde_json::json!({"a": [1234567890.5, 2, "x"], "b": {"c": 0.1, "d": null, "e": 1.0}});
        let compact = String::from_utf8(to_json_bytes(&v, false).unwrap()).unwrap();
        assert_eq!(compact, r#"{"a":[1234568000.0,2,"x"],"b":{"c":0.1,"d":null,"e":1.0}}"#);
        // the layout of the pretty form is serde_json's own
        let pretty = String::from_utf8(to_json_bytes(&v, true).unwrap()).unwrap();
        let plain = serde_json::to_string_pretty(
            &serde_json::json!({"a": [1234568000.0, 2, "x"], "b": {"c": 0.1, "d": null, "e": 1.0}}),
        )
        .unwrap();
        assert_eq!(pretty, plain);
    }

    #[test]
    fn rounding_twice_writes_the_same_text() {
        let xs: Vec<f64> = (1..2000).map(|i| (i as f64).sqrt() * 1234.5678 / 7.0).collect();
        let once = to_json_bytes(&xs, false).unwrap();
        let back: Vec<f64> = serde_json::from_slice(&once).unwrap();
        assert_eq!(to_json_bytes(&back, false).unwrap(), once);
        for (x, y) in xs.iter().zip(&back) {
            assert!(((x - y) / x).abs() <= 5e-7, "{x} {y}");
        }
    }
}

//! A small MessagePack reader for the AMDGPU metadata note (MessagePack
//! specification, "Formats"). Nesting depth and allocation are bounded by
//! the input: every element takes at least one input byte.

use std::fmt;

/// A decoded MessagePack value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    /// Any integer that fits in `i64`.
    Int(i64),
    /// A `uint 64` above `i64::MAX`.
    UInt(u64),
    F32(f32),
    F64(f64),
    /// A string (invalid UTF-8 is replaced with U+FFFD).
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    /// Key/value pairs in encoded order.
    Map(Vec<(Value, Value)>),
    Ext(i8, Vec<u8>),
}

/// Why a MessagePack buffer did not decode; `offset` is from the start of the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgpackError {
    pub offset: usize,
    pub what: &'static str,
}

impl fmt::Display for MsgpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at msgpack offset {}", self.what, self.offset)
    }
}

const MAX_DEPTH: u32 = 64;

impl Value {
    /// Decodes one value from the start of `bytes`; trailing bytes are an error.
    pub fn decode(bytes: &[u8]) -> Result<Value, MsgpackError> {
        let mut d = Decoder { bytes, at: 0 };
        let v = d.value(0)?;
        if d.at != bytes.len() {
            return Err(MsgpackError {
                offset: d.at,
                what: "trailing bytes after the value",
            });
        }
        Ok(v)
    }

    /// The value of `key` in a map with string keys.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(i) => u64::try_from(i).ok(),
            Value::UInt(u) => Some(u),
            _ => None,
        }
    }

    /// A boolean (integers 0 and 1 count, as some producers write them).
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            Value::Int(0) => Some(false),
            Value::Int(1) => Some(true),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Serializes as the equivalent JSON-like value: maps with string keys,
/// binary data as byte arrays, ext types as `[type, bytes]`.
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::UInt(u) => s.serialize_u64(*u),
            Value::F32(f) => s.serialize_f32(*f),
            Value::F64(f) => s.serialize_f64(*f),
            Value::Str(v) => s.serialize_str(v),
            Value::Bin(b) => s.collect_seq(b),
            Value::Ext(t, b) => (t, b).serialize(s),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Map(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    match k {
                        Value::Str(k) => map.serialize_entry(k, v)?,
                        k => map.serialize_entry(&format!("{k:?}"), v)?,
                    }
                }
                map.end()
            }
        }
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    fn err(&self, what: &'static str) -> MsgpackError {
        MsgpackError {
            offset: self.at,
            what,
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], MsgpackError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.err("truncated value"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, MsgpackError> {
        let s = self.take(n)?;
        Ok(s.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    /// A length prefix checked against the bytes left (each element needs at
    /// least `min_each` bytes), so no allocation exceeds the input size.
    fn len(&mut self, n: usize, min_each: usize) -> Result<usize, MsgpackError> {
        let start = self.at;
        let len = self.uint(n)? as usize;
        if len.saturating_mul(min_each) > self.remaining() {
            return Err(MsgpackError {
                offset: start,
                what: "length exceeds the remaining bytes",
            });
        }
        Ok(len)
    }

    fn str(&mut self, len: usize) -> Result<Value, MsgpackError> {
        let s = self.take(len)?;
        Ok(Value::Str(String::from_utf8_lossy(s).into_owned()))
    }

    fn array(&mut self, len: usize, depth: u32) -> Result<Value, MsgpackError> {
        let mut v = Vec::with_capacity(len.min(self.remaining()));
        for _ in 0..len {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(v))
    }

    fn map(&mut self, len: usize, depth: u32) -> Result<Value, MsgpackError> {
        let mut v = Vec::with_capacity(len.min(self.remaining() / 2));
        for _ in 0..len {
            let k = self.value(depth + 1)?;
            let val = self.value(depth + 1)?;
            v.push((k, val));
        }
        Ok(Value::Map(v))
    }

    fn ext(&mut self, len: usize) -> Result<Value, MsgpackError> {
        let t = self.take(1)?[0] as i8;
        Ok(Value::Ext(t, self.take(len)?.to_vec()))
    }

    fn value(&mut self, depth: u32) -> Result<Value, MsgpackError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting deeper than 64"));
        }
        let b = self.take(1)?[0];
        Ok(match b {
            0x00..=0x7f => Value::Int(i64::from(b)),
            0x80..=0x8f => self.map(usize::from(b & 0xf), depth)?,
            0x90..=0x9f => self.array(usize::from(b & 0xf), depth)?,
            0xa0..=0xbf => self.str(usize::from(b & 0x1f))?,
            0xc0 => Value::Nil,
            0xc1 => return Err(self.err("reserved type byte 0xc1")),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (b - 0xc4), 1)?;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (b - 0xc7), 1)?;
                self.ext(n)?
            }
            0xca => Value::F32(f32::from_bits(self.uint(4)? as u32)),
            0xcb => Value::F64(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => {
                let u = self.uint(1 << (b - 0xcc))?;
                match i64::try_from(u) {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::UInt(u),
                }
            }
            0xd0..=0xd3 => {
                let n = 1usize << (b - 0xd0);
                let u = self.uint(n)?;
                let shift = 64 - 8 * n as u32;
                Value::Int(((u << shift) as i64) >> shift)
            }
            0xd4..=0xd8 => self.ext(1 << (b - 0xd4))?,
            0xd9..=0xdb => {
                let n = self.len(1 << (b - 0xd9), 1)?;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.len(if b == 0xdc { 2 } else { 4 }, 1)?;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.len(if b == 0xde { 2 } else { 4 }, 2)?;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(i64::from(b as i8)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_scalars_and_containers() {
        // {"a": [1, -1, true, nil, "xy"], "b": 300, "c": -200}
        let bytes = [
            0x83, 0xa1, b'a', 0x95, 0x01, 0xff, 0xc3, 0xc0, 0xa2, b'x', b'y', 0xa1, b'b', 0xcd,
            0x01, 0x2c, 0xa1, b'c', 0xd1, 0xff, 0x38,
        ];
        let v = Value::decode(&bytes).unwrap();
        let a = v.get("a").and_then(Value::as_array).unwrap();
        assert_eq!(a[0], Value::Int(1));
        assert_eq!(a[1], Value::Int(-1));
        assert_eq!(a[2], Value::Bool(true));
        assert_eq!(a[3], Value::Nil);
        assert_eq!(a[4].as_str(), Some("xy"));
        assert_eq!(v.get("b").and_then(Value::as_u64), Some(300));
        assert_eq!(v.get("c"), Some(&Value::Int(-200)));
    }

    #[test]
    fn rejects_huge_lengths_and_deep_nesting() {
        // array32 claiming 2^32-1 elements with no data: no allocation, an error.
        let e = Value::decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
        assert_eq!(e.what, "length exceeds the remaining bytes");
        let deep = vec![0x91u8; 100];
        assert_eq!(
            Value::decode(&deep).unwrap_err().what,
            "nesting deeper than 64"
        );
        assert!(Value::decode(&[0xa5, b'a']).is_err());
        assert!(Value::decode(&[0x01, 0x02]).is_err());
    }
}

//! The checks of a `model.safetensors` file that need only its size and its header, made
//! before the file is hashed or loaded: a damaged or hostile file (a header length of 2^40,
//! tensors past the end) is refused at once, rather than after reading a gigabyte.
//!
//! The layout (<https://github.com/huggingface/safetensors>): an 8-byte little-endian header
//! length N, N bytes of JSON (`{"name": {"dtype", "shape", "data_offsets": [begin, end]},
//! "__metadata__": {...}}`), then the tensors' bytes, every byte belonging to exactly one
//! tensor (no holes, no overlaps), to the end of the file.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

/// The largest header read (16 MiB): all-MiniLM-L6-v2's is about 9 KB, and 16 MiB is room for
/// some 150,000 tensors. The safetensors format itself allows 100 MB.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;

/// The largest weights file loaded (4 GiB): a BERT-large in f32 is 1.34 GB, and the weights
/// are widened to f32 in memory, so a larger file is not a model this encoder can run.
pub const MAX_WEIGHTS_BYTES: u64 = 4 << 30;

/// What the header says, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The file's size.
    pub file_len: u64,
    /// The header's length (after the 8 bytes that give it).
    pub header_len: u64,
    /// The number of tensors.
    pub tensors: usize,
}

/// Why a weights file was refused.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// The file is not a safetensors file that could be loaded; says what is wrong.
    #[error("{0}")]
    Bad(String),
}

fn bad(why: String) -> WeightsError {
    WeightsError::Bad(why)
}

/// The size of one element of a safetensors dtype, in bytes.
fn dtype_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E4M3" | "F8_E5M2" => 1,
        "I16" | "U16" | "F16" | "BF16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" => 8,
        _ => return None,
    })
}

/// Checks the file at `path` from its size and header only (at most 8 bytes +
/// [`MAX_HEADER_BYTES`] read): the sizes bounded, the header JSON parsed, and its tensors
/// covering the data exactly, each as long as its dtype and shape say.
pub fn check_safetensors(path: &Path) -> Result<Layout, WeightsError> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(bad("it is not a file".to_string()));
    }
    let file_len = meta.len();
    if file_len > MAX_WEIGHTS_BYTES {
        return Err(bad(format!(
            "it is {file_len} bytes, more than the {MAX_WEIGHTS_BYTES} bytes (4 GiB) of the \
             largest model this encoder loads"
        )));
    }
    let mut len_bytes = [0u8; 8];
    file.read_exact(&mut len_bytes).map_err(|_| {
        bad(format!(
            "it is {file_len} bytes, too short for the 8 bytes that give a safetensors header's \
             length"
        ))
    })?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER_BYTES {
        return Err(bad(format!(
            "its header length is {header_len} bytes, more than the {MAX_HEADER_BYTES} bytes a \
             model's header may take"
        )));
    }
    let data_len = file_len
        .checked_sub(8)
        .and_then(|rest| rest.checked_sub(header_len))
        .ok_or_else(|| {
            bad(format!(
                "its header length is {header_len} bytes, but the file is {file_len} bytes"
            ))
        })?;
    let mut header = Vec::new();
    file.take(header_len).read_to_end(&mut header)?;
    let json: Value =
        serde_json::from_slice(&header).map_err(|e| bad(format!("its header is not JSON: {e}")))?;
    let Value::Object(entries) = json else {
        return Err(bad("its header is not a JSON object".to_string()));
    };
    let mut spans = Vec::with_capacity(entries.len());
    for (name, entry) in &entries {
        if name == "__metadata__" {
            continue;
        }
        let tensor = |why: &str| bad(format!("the tensor `{name}` {why}"));
        let dtype = entry.get("dtype").and_then(Value::as_str).unwrap_or("");
        let size = dtype_bytes(dtype).ok_or_else(|| tensor(&format!("has dtype `{dtype}`")))?;
        let elements = entry
            .get("shape")
            .and_then(Value::as_array)
            .ok_or_else(|| tensor("has no shape"))?
            .iter()
            .try_fold(1u64, |n, d| d.as_u64().and_then(|d| n.checked_mul(d)))
            .ok_or_else(|| tensor("has a shape that is not a list of sizes"))?;
        let offsets = entry
            .get("data_offsets")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>());
        let (begin, end) = match offsets.flatten().as_deref() {
            Some(&[begin, end]) if begin <= end => (begin, end),
            _ => return Err(tensor("has no valid data_offsets [begin, end]")),
        };
        if end > data_len {
            return Err(tensor(&format!(
                "ends at byte {end} of the data, but the file holds {data_len} bytes of data"
            )));
        }
        if elements.checked_mul(size) != Some(end - begin) {
            return Err(tensor(&format!(
                "takes {} bytes, but its dtype {dtype} and shape make {elements} elements of \
                 {size} bytes",
                end - begin
            )));
        }
        spans.push((begin, end));
    }
    spans.sort_unstable();
    let mut at = 0;
    for (begin, end) in &spans {
        if *begin != at {
            return Err(bad(format!(
                "its tensors leave a hole or overlap at byte {at} of the data"
            )));
        }
        at = *end;
    }
    if at != data_len {
        return Err(bad(format!(
            "its tensors take {at} bytes, but the file holds {data_len} bytes of data"
        )));
    }
    Ok(Layout {
        file_len,
        header_len,
        tensors: spans.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(header: &str, data: usize) -> tempfile::NamedTempFile {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.resize(bytes.len() + data, 0);
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    fn refused(header: &str, data: usize) -> String {
        match check_safetensors(file_with(header, data).path()) {
            Err(WeightsError::Bad(why)) => why,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_well_formed_file_passes() {
        let f = file_with(
            r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"F16","shape":[4],"data_offsets":[24,32]}}  "#,
            32,
        );
        let l = check_safetensors(f.path()).unwrap();
        assert_eq!(l.tensors, 2);
        assert_eq!(l.file_len, 8 + l.header_len + 32);
    }

    #[test]
    fn tensors_must_cover_the_data_exactly_as_their_shapes_say() {
        let one = |offsets: &str, shape: &str, data: usize| {
            refused(
                &format!(r#"{{"a":{{"dtype":"F32","shape":{shape},"data_offsets":{offsets}}}}}"#),
                data,
            )
        };
        assert!(one("[0,24]", "[2,3]", 16).contains("ends at byte 24"));
        assert!(one("[0,16]", "[2,3]", 16).contains("takes 16 bytes"));
        assert!(one("[0,24]", "[2,3]", 32).contains("32 bytes of data"));
        assert!(one("[8,32]", "[2,3]", 32).contains("hole"));
        assert!(one("[24,0]", "[2,3]", 32).contains("data_offsets"));
        assert!(one("[0,24]", r#"["x"]"#, 24).contains("shape"));
        assert!(refused(
            r#"{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}"#,
            1
        )
        .contains("dtype `Q4`"));
        assert!(refused("[1, 2]", 0).contains("not a JSON object"));
        assert!(refused("{nope", 0).contains("not JSON"));
    }

    #[test]
    fn the_header_length_is_bounded_by_the_limit_and_the_file() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), (1u64 << 40).to_le_bytes()).unwrap();
        let why = check_safetensors(f.path()).unwrap_err().to_string();
        assert!(
            why.contains("1099511627776") && why.contains("16777216"),
            "{why}"
        );
        std::fs::write(f.path(), 100u64.to_le_bytes()).unwrap();
        let why = check_safetensors(f.path()).unwrap_err().to_string();
        assert!(
            why.contains("header length is 100 bytes, but the file is 8"),
            "{why}"
        );
        std::fs::write(f.path(), [1, 2, 3]).unwrap();
        let why = check_safetensors(f.path()).unwrap_err().to_string();
        assert!(why.contains("too short"), "{why}");
    }
}

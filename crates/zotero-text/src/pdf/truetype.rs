//! The one part of an embedded TrueType program text extraction needs when a font has no
//! `/ToUnicode`: its `cmap` table, read backwards (glyph → character), so that a composite
//! font's glyph ids (`Identity-H`, the usual encoding of a subset TrueType font) give text.
//! Formats 0, 4, 6 and 12 of the Unicode subtables; every loop bounded by the table's own
//! length and by [`MAX_MAPPED`].

use std::collections::HashMap;

/// Characters read from one `cmap` at most (a CJK font maps ~30,000).
const MAX_MAPPED: usize = 100_000;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The glyph → character map of the font program `font` (a TrueType or OpenType file with
/// TrueType outlines): from its Unicode `cmap` subtable, the lowest character of a glyph
/// kept. Empty when the program has none.
pub(crate) fn glyph_chars(font: &[u8]) -> HashMap<u16, char> {
    let mut out = HashMap::new();
    let Some(cmap) = table(font, b"cmap") else {
        return out;
    };
    let Some(sub) = unicode_subtable(cmap) else {
        return out;
    };
    let mut put = |code: u32, gid: u16| {
        if gid == 0 {
            return;
        }
        if let Some(c) = char::from_u32(code) {
            let e = out.entry(gid).or_insert(c);
            if c < *e {
                *e = c;
            }
        }
    };
    let mut mapped = 0usize;
    let mut each = |code: u32, gid: u16| -> bool {
        put(code, gid);
        mapped += 1;
        mapped < MAX_MAPPED
    };
    match u16_at(sub, 0) {
        Some(0) => format0(sub, &mut each),
        Some(4) => format4(sub, &mut each),
        Some(6) => format6(sub, &mut each),
        Some(12) => format12(sub, &mut each),
        _ => {}
    }
    out
}

/// The table tagged `tag` in the font's table directory.
fn table<'a>(font: &'a [u8], tag: &[u8; 4]) -> Option<&'a [u8]> {
    let count = usize::from(u16_at(font, 4)?);
    (0..count).find_map(|i| {
        let rec = 12 + 16 * i;
        if font.get(rec..rec + 4)? != tag {
            return None;
        }
        let offset = usize::try_from(u32_at(font, rec + 8)?).ok()?;
        let length = usize::try_from(u32_at(font, rec + 12)?).ok()?;
        font.get(offset..offset.checked_add(length)?)
    })
}

/// The best Unicode subtable: (3,10) full repertoire, (0,4), (3,1) BMP, (0,3), any (0,x).
fn unicode_subtable(cmap: &[u8]) -> Option<&[u8]> {
    let count = usize::from(u16_at(cmap, 2)?);
    let rank = |platform: u16, encoding: u16| match (platform, encoding) {
        (3, 10) => Some(0),
        (0, 4) | (0, 6) => Some(1),
        (3, 1) => Some(2),
        (0, _) => Some(3),
        _ => None,
    };
    let best = (0..count)
        .filter_map(|i| {
            let rec = 4 + 8 * i;
            let r = rank(u16_at(cmap, rec)?, u16_at(cmap, rec + 2)?)?;
            Some((r, usize::try_from(u32_at(cmap, rec + 4)?).ok()?))
        })
        .min()?;
    cmap.get(best.1..)
}

fn format0(sub: &[u8], each: &mut impl FnMut(u32, u16) -> bool) {
    for code in 0..256u32 {
        let Some(&gid) = sub.get(6 + code as usize) else {
            return;
        };
        if !each(code, u16::from(gid)) {
            return;
        }
    }
}

fn format4(sub: &[u8], each: &mut impl FnMut(u32, u16) -> bool) {
    let Some(segs) = u16_at(sub, 6).map(|n| usize::from(n / 2)) else {
        return;
    };
    let (ends, starts, deltas, ranges) = (14, 16 + 2 * segs, 16 + 4 * segs, 16 + 6 * segs);
    for s in 0..segs {
        let (Some(end), Some(start), Some(delta), Some(range)) = (
            u16_at(sub, ends + 2 * s),
            u16_at(sub, starts + 2 * s),
            u16_at(sub, deltas + 2 * s),
            u16_at(sub, ranges + 2 * s),
        ) else {
            return;
        };
        for code in start..=end {
            let gid = if range == 0 {
                code.wrapping_add(delta)
            } else {
                // The glyph index array entry, addressed from the range offset's own place.
                let at = ranges + 2 * s + usize::from(range) + 2 * usize::from(code - start);
                match u16_at(sub, at) {
                    Some(0) | None => 0,
                    Some(g) => g.wrapping_add(delta),
                }
            };
            if !each(u32::from(code), gid) {
                return;
            }
            if code == u16::MAX {
                break;
            }
        }
    }
}

fn format6(sub: &[u8], each: &mut impl FnMut(u32, u16) -> bool) {
    let (Some(first), Some(count)) = (u16_at(sub, 6), u16_at(sub, 8)) else {
        return;
    };
    for i in 0..usize::from(count) {
        let Some(gid) = u16_at(sub, 10 + 2 * i) else {
            return;
        };
        if !each(u32::from(first) + i as u32, gid) {
            return;
        }
    }
}

fn format12(sub: &[u8], each: &mut impl FnMut(u32, u16) -> bool) {
    let Some(groups) = u32_at(sub, 12).and_then(|n| usize::try_from(n).ok()) else {
        return;
    };
    for g in 0..groups {
        let rec = 16 + 12 * g;
        let (Some(start), Some(end), Some(gid)) =
            (u32_at(sub, rec), u32_at(sub, rec + 4), u32_at(sub, rec + 8))
        else {
            return;
        };
        for (k, code) in (start..=end.min(0x10_FFFF)).enumerate() {
            let Ok(gid) = u16::try_from(u64::from(gid) + k as u64) else {
                break;
            };
            if !each(code, gid) {
                return;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A font program holding only a `cmap` with one format 4 subtable (3,1) mapping
    /// `chars` (ascending) to glyphs 1, 2, 3… in order, one segment each.
    pub(crate) fn font_with_cmap(chars: &[char]) -> Vec<u8> {
        let mut segs: Vec<(u16, u16, u16)> = chars
            .iter()
            .enumerate()
            .map(|(i, c)| (*c as u16, *c as u16, i as u16 + 1))
            .collect();
        segs.push((0xFFFF, 0xFFFF, 0));
        let n = segs.len() as u16;
        let mut sub = Vec::new();
        for v in [4u16, 0, 0, 2 * n, 0, 0, 0] {
            sub.extend_from_slice(&v.to_be_bytes());
        }
        for (_, end, _) in &segs {
            sub.extend_from_slice(&end.to_be_bytes());
        }
        sub.extend_from_slice(&0u16.to_be_bytes());
        for (start, _, _) in &segs {
            sub.extend_from_slice(&start.to_be_bytes());
        }
        for (start, _, gid) in &segs {
            let delta = if *start == 0xFFFF {
                1
            } else {
                gid.wrapping_sub(*start)
            };
            sub.extend_from_slice(&delta.to_be_bytes());
        }
        for _ in &segs {
            sub.extend_from_slice(&0u16.to_be_bytes());
        }
        let len = sub.len() as u16;
        sub[2..4].copy_from_slice(&len.to_be_bytes());
        let mut cmap = Vec::new();
        for v in [0u16, 1, 3, 1] {
            cmap.extend_from_slice(&v.to_be_bytes());
        }
        cmap.extend_from_slice(&12u32.to_be_bytes());
        cmap.extend(sub);
        let mut font = Vec::new();
        font.extend_from_slice(&0x0001_0000u32.to_be_bytes());
        for v in [1u16, 16, 0, 0] {
            font.extend_from_slice(&v.to_be_bytes());
        }
        font.extend_from_slice(b"cmap");
        font.extend_from_slice(&0u32.to_be_bytes());
        font.extend_from_slice(&28u32.to_be_bytes());
        font.extend_from_slice(&(cmap.len() as u32).to_be_bytes());
        font.extend(cmap);
        font
    }

    #[test]
    fn a_format_4_cmap_is_read_backwards() {
        let font = font_with_cmap(&['H', 'e', 'l', 'o', 'é', '€']);
        let map = glyph_chars(&font);
        let got: Vec<(u16, char)> = {
            let mut v: Vec<_> = map.into_iter().collect();
            v.sort_unstable();
            v
        };
        assert_eq!(
            got,
            [(1, 'H'), (2, 'e'), (3, 'l'), (4, 'o'), (5, 'é'), (6, '€')]
        );
        assert!(glyph_chars(b"not a font").is_empty());
        assert!(glyph_chars(&font[..40]).is_empty());
    }
}

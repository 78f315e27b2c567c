//! Advance widths of the standard fonts a PDF may use without `/Widths` (Adobe's AFM metrics
//! for the printable ASCII range; bold and italic faces use their regular face's, close
//! enough for word spacing and boxes; other codes 0.5 em).

/// Helvetica (and Arial), codes 32–126, 1/1000 em.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 222, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 222, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];

/// Times-Roman, codes 32–126, 1/1000 em.
const TIMES: [u16; 95] = [
    250, 333, 408, 500, 500, 833, 778, 333, 333, 333, 500, 564, 250, 333, 250, 278, 500, 500, 500,
    500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444, 921, 722, 667, 667, 722, 611,
    556, 722, 722, 333, 389, 722, 611, 889, 722, 722, 556, 722, 667, 556, 611, 722, 722, 944, 722,
    722, 611, 333, 278, 333, 469, 500, 333, 444, 500, 444, 500, 444, 333, 500, 500, 278, 278, 500,
    278, 778, 500, 500, 500, 500, 333, 389, 278, 500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
];

/// The width of `code` in the standard font named `base_font` (subset prefix and style
/// suffixes ignored).
pub(crate) fn width(base_font: &[u8], code: usize) -> f64 {
    let name = String::from_utf8_lossy(base_font).to_ascii_lowercase();
    if name.contains("courier") || name.contains("mono") {
        return 600.0;
    }
    let table = if name.contains("helvetica") || name.contains("arial") {
        &HELVETICA
    } else {
        &TIMES
    };
    code.checked_sub(32)
        .and_then(|i| table.get(i))
        .map_or(500.0, |w| f64::from(*w))
}

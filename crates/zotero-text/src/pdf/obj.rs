//! Small readers of PDF objects: references followed (a bounded number of hops), numbers,
//! rectangles and matrices.

use lopdf::{Document, Object};

/// `obj` with references followed, at most a few hops (a reference loop ends as `Null`).
pub(crate) fn resolve<'a>(doc: &'a Document, mut obj: &'a Object) -> &'a Object {
    for _ in 0..8 {
        match obj {
            Object::Reference(id) => match doc.get_object(*id) {
                Ok(next) => obj = next,
                Err(_) => return &Object::Null,
            },
            _ => return obj,
        }
    }
    &Object::Null
}

/// A number, through references.
pub(crate) fn num(doc: &Document, obj: &Object) -> Option<f64> {
    match resolve(doc, obj) {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// A number given directly (content-stream operands).
pub(crate) fn operand(obj: &Object) -> Option<f64> {
    match obj {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// `[x1 y1 x2 y2]` normalised so x1 <= x2, y1 <= y2.
pub(crate) fn rect(doc: &Document, obj: &Object) -> Option<[f64; 4]> {
    let a = resolve(doc, obj).as_array().ok()?;
    let v: Vec<f64> = a.iter().filter_map(|o| num(doc, o)).collect();
    match v.as_slice() {
        [a, b, c, d] => Some([a.min(*c), b.min(*d), a.max(*c), b.max(*d)]),
        _ => None,
    }
}

/// A PDF matrix `[a b c d e f]`: a point maps as `[x y 1] × M`.
pub(crate) type Matrix = [f64; 6];

pub(crate) const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `m` then `n`: the point is mapped by `m` first.
pub(crate) fn mul(m: &Matrix, n: &Matrix) -> Matrix {
    let [a, b, c, d, e, f] = *m;
    let [a2, b2, c2, d2, e2, f2] = *n;
    [
        a * a2 + b * c2,
        a * b2 + b * d2,
        c * a2 + d * c2,
        c * b2 + d * d2,
        e * a2 + f * c2 + e2,
        e * b2 + f * d2 + f2,
    ]
}

pub(crate) fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    let [a, b, c, d, e, f] = *m;
    (x * a + y * c + e, x * b + y * d + f)
}

/// Six operands as a matrix.
pub(crate) fn matrix(ops: &[Object]) -> Option<Matrix> {
    let v: Vec<f64> = ops.iter().filter_map(operand).collect();
    match v.as_slice() {
        [a, b, c, d, e, f] => Some([*a, *b, *c, *d, *e, *f]),
        _ => None,
    }
}

/// A matrix stored in a dictionary (a form's `/Matrix`).
pub(crate) fn matrix_obj(doc: &Document, obj: &Object) -> Option<Matrix> {
    let a = resolve(doc, obj).as_array().ok()?;
    let v: Vec<f64> = a.iter().filter_map(|o| num(doc, o)).collect();
    match v.as_slice() {
        [a, b, c, d, e, f] => Some([*a, *b, *c, *d, *e, *f]),
        _ => None,
    }
}

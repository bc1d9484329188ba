//! TH's products on strided (row-major-minded) views as cuBLAS's column-major GEMM, without a
//! device: which operand goes where, with which transpose flag and leading dimension.
//!
//! A strided `rows x cols` matrix `X` (element `(i, j)` at `i*rs + j*cs`) is a column-major
//! matrix `X'` with `op(X') == X` when
//! - `rs == 1`: `X' = X`, not transposed, `ld = cs` (element `(i, j)` at `i + j*ld`);
//! - `cs == 1`: `X' = X^T` stored column-major, transposed, `ld = rs`;
//!
//! a stride of a size-1 dimension is never used, so it places no condition (its `ld` is the
//! smallest cuBLAS accepts, `max(1, rows)`), and `ld` must be at least `max(1, rows of X')`.
//! A matrix that fits neither way (both strides > 1, a zero stride from `expand`, rows that
//! overlap) has to be copied to a contiguous one first.
//!
//! The output decides the orientation, as THC did for its row-major tensors: `C` column-major
//! gives `C = op(A) op(B)` directly; `C` row-major (`cs == 1`, the usual case) is `C^T`
//! column-major, so the call computes `C^T = B^T A^T`, the operands swapped. An output that
//! fits neither is computed into a contiguous temporary.

/// A strided matrix: sizes and element strides (of its rows, its columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mat {
    pub rows: i64,
    pub cols: i64,
    pub rs: i64,
    pub cs: i64,
}

impl Mat {
    pub fn new(rows: i64, cols: i64, rs: i64, cs: i64) -> Mat {
        Mat { rows, cols, rs, cs }
    }

    /// The transpose (same memory).
    pub fn t(self) -> Mat {
        Mat { rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }

    /// A contiguous row-major matrix of the same shape.
    pub fn contiguous(self) -> Mat {
        Mat { cs: 1, rs: self.cols.max(1), ..self }
    }
}

/// An operand as cuBLAS takes it: its transpose flag and leading dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub trans: bool,
    pub ld: i64,
}

/// `X` as `op(X')` with `X'` column-major, if it fits (module docs).
pub fn as_op(x: Mat) -> Option<Op> {
    let direct = |x: Mat| {
        if x.rows > 1 && x.rs != 1 {
            return None;
        }
        let ld = if x.cols <= 1 { x.rows.max(1) } else { x.cs };
        (ld >= x.rows.max(1)).then_some(ld)
    };
    if let Some(ld) = direct(x) {
        return Some(Op { trans: false, ld });
    }
    direct(x.t()).map(|ld| Op { trans: true, ld })
}

/// `C` (`m x n`) as the output of a column-major GEMM: `Some(false)` when it is column-major
/// (`ldc` from `as_op`), `Some(true)` when its transpose is, `None` when neither.
pub fn output(c: Mat) -> Option<(bool, i64)> {
    // Row-major first: THC's orientation for its (row-major) tensors.
    if let Some(op) = as_op(c.t()).filter(|op| !op.trans) {
        return Some((true, op.ld));
    }
    as_op(c).filter(|op| !op.trans).map(|op| (false, op.ld))
}

/// The column-major call computing `C = A B` (`A` m x k, `B` k x n): sizes, operands in
/// cuBLAS's order, and whether they were swapped (`C^T = B^T A^T`: cuBLAS's `A` slot gets
/// TH's `B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub swapped: bool,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub a: Op,
    pub b: Op,
    pub ldc: i64,
}

/// What has to be copied to a contiguous matrix before the product maps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Copies {
    pub out: bool,
    pub a: bool,
    pub b: bool,
}

/// The mapping of `C = A B`, or which operands need a contiguous copy first. Shapes are the
/// caller's to check (`a.rows == c.rows`, `a.cols == b.rows`, `b.cols == c.cols`).
pub fn map(a: Mat, b: Mat, c: Mat) -> Result<Mapping, Copies> {
    let Some((swapped, ldc)) = output(c) else {
        return Err(Copies { out: true, a: as_op(a).is_none(), b: as_op(b).is_none() });
    };
    let (x, y) = if swapped { (b.t(), a.t()) } else { (a, b) };
    match (as_op(x), as_op(y)) {
        (Some(opx), Some(opy)) => Ok(Mapping { swapped, m: x.rows, n: y.cols, k: x.cols, a: opx, b: opy, ldc }),
        (ox, oy) => {
            let (ca, cb) = if swapped { (oy.is_none(), ox.is_none()) } else { (ox.is_none(), oy.is_none()) };
            Err(Copies { out: false, a: ca, b: cb })
        }
    }
}

#[cfg(test)]
mod tests;

//! The six comparisons as a value: what the host's comparison ops (`ops::arith::cmp_value`,
//! `cmp_tensor`) take and what a device kernel's launch encodes (`cuda::launch::cmp_mask`),
//! so both engines name a comparison the same way.

/// The six comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
    Eq,
}

impl Cmp {
    #[inline(always)]
    pub fn test<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Ne => a != b,
            Cmp::Eq => a == b,
        }
    }
}

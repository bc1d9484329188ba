//! Lookup and sparse layers: LookupTable (the gradient of an embedding and its max-norm
//! renormalisation), LookupTableBag (an embedding summed or averaged per bag; THCUNN only),
//! IndexLinear (a linear layer over (key, value) lists) and SparseLinear (a linear layer over
//! COO input, with its "legacy" batch x nnz x 2 form).
//!
//! Every index is **0-based** (torch7's are 1-based): lookup rows and `paddingValue`,
//! IndexLinear's keys (`key + keysOffset` is the 0-based weight row), SparseLinear's batch rows
//! and feature indices. An index out of range is a `TH_ERR_INDEX` error naming the argument,
//! raised before any output is written.

mod device;
mod index_linear;
mod lookup;
mod lookup_bag;
mod sparse_linear;

pub use index_linear::{
    acc_grad_parameters as index_linear_acc_grad_parameters,
    acc_update_grad_parameters as index_linear_acc_update_grad_parameters, update_output as index_linear_update_output,
    update_parameters as index_linear_update_parameters,
};
pub use lookup::{acc_grad_parameters as lookup_table_acc_grad_parameters, renorm as lookup_table_renorm};
pub use lookup_bag::{
    acc_grad_parameters as lookup_table_bag_acc_grad_parameters, update_output as lookup_table_bag_update_output,
};
pub use sparse_linear::{
    Format as SparseFormat, acc_grad_parameters as sparse_linear_acc_grad_parameters,
    update_output as sparse_linear_update_output, update_parameters as sparse_linear_update_parameters,
    zero_grad_parameters as sparse_linear_zero_grad_parameters,
};

/// The rows `rows` (strictly increasing, each below `data.len() / width`) of the row-major
/// matrix `data` as disjoint mutable slices, in the order of `rows`.
fn rows_mut<T>(data: &mut [T], width: usize, rows: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut base = 0;
    for r in rows {
        let tail = std::mem::take(&mut rest);
        let Some(tail) = tail.get_mut((r - base) * width..) else { break };
        if tail.len() < width {
            break;
        }
        let (row, after) = tail.split_at_mut(width);
        out.push(row);
        rest = after;
        base = r + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn rows_mut_splits_disjoint_rows() {
        let mut d: Vec<i32> = (0..12).collect();
        let rows = super::rows_mut(&mut d, 3, [0, 2, 3]);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0], &[0, 1, 2]);
        assert_eq!(rows[1], &[6, 7, 8]);
        assert_eq!(rows[2], &[9, 10, 11]);
    }
}

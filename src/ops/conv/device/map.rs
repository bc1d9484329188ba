//! conv2Dmap (cutorch's connection-table form): see the parent module's documentation.

use super::*;
use crate::core::dtype::Prim;

/// A table value as a 1-based plane number in `1..=n`, or the error naming it.
fn table_entry<T: Scalar>(v: T, row: usize, what: &str, n: i64) -> Result<i64> {
    let x = match v.to_prim() {
        Prim::F(f) => f,
        Prim::I(i) => i as f64,
    };
    if x.fract() != 0.0 || !(x >= 1.0 && x <= n as f64) {
        return Err(Error::index(format!(
            "conv2Dmap: table[{row}] {what} plane {x} is not an integer in 1..{n} (table values are 1-based)"
        ))
        .at_arg(7));
    }
    Ok(x as i64)
}

/// conv2Dmap (cutorch's): see the module documentation.
#[allow(clippy::too_many_arguments)]
pub fn map<T: Gemm>(
    r: &Tensor<T>,
    t: &View<T>,
    k: &View<T>,
    sx: i64,
    sy: i64,
    table: &View<T>,
    fanin: i64,
) -> Result<()> {
    let name = "conv2Dmap";
    expect_dims(t, 3, "input", 3)?;
    expect_dims(k, 3, "kernel", 4)?;
    expect_dims(table, 2, "table", 7)?;
    let dev = device_of(r, &[t, k, table], name)?;
    let (c, h, w) = (t.sizes[0], t.sizes[1], t.sizes[2]);
    let (nk, kh, kw) = (k.sizes[0], k.sizes[1], k.sizes[2]);
    let (_, o) = Geom::new([1, h, w], [1, kh, kw], [1, sy, sx], Kind::Valid, name, [0, 6, 5])?;
    let (oh, ow) = (o[1] as i64, o[2] as i64);
    if fanin < 1 {
        return Err(Error::invalid(format!("{name}: fanin must be positive, got {fanin}")).at_arg(8));
    }
    let no = nk / fanin;
    if no < 1 || table.sizes != [no * fanin, 2] {
        return Err(Error::size(format!(
            "{name}: table must be (kernel planes / fanin * fanin) x 2 = {} x 2 for {nk} kernel planes and fanin \
             {fanin}, got {:?}",
            no * fanin,
            table.sizes
        ))
        .at_arg(7));
    }
    let vals = crate::ops::copy::values(table)?;
    for (row, pair) in vals.chunks(2).enumerate() {
        table_entry(pair[0], row, "input", c)?;
        table_entry(pair[1], row, "kernel", nk)?;
    }
    let shape = [no, oh, ow];
    check_out(r, &shape, name)?;
    let t = detached(dev, t, shares(r, t))?;
    let k = detached(dev, k, shares(r, k))?;
    let table = detached(dev, table, shares(r, table))?;
    let nelem = r.with_view(|v| v.numel());
    let out = resize_out(r, &shape)?;
    if nelem == 0 || nelem != out.numel() {
        crate::cuda::ops::fill(dev, &out, T::zero())?;
    }
    let p = THCConv {
        n: out.numel() as i64,
        out: device_base(&out)?,
        inp: device_base(&t)?,
        ker: device_base(&k)?,
        table: device_base(&table)?,
        g: [no, fanin],
        k: [kh, kw],
        o: [oh, ow],
        i: [h, w],
        lim: [c, nk],
        is: [0, t.strides[0], t.strides[1], t.strides[2]],
        os: [out.strides[0], out.strides[1], out.strides[2]],
        ks: [k.strides[0], k.strides[1], k.strides[2]],
        ts: [table.strides[0], table.strides[1]],
        step: [sy, sx],
        dil: [1, 1],
        ..THCConv::default()
    };
    let narrow =
        [(&out.sizes, &out.strides), (&t.sizes, &t.strides), (&k.sizes, &k.strides), (&table.sizes, &table.strides)]
            .iter()
            .all(|(s, st)| reach(s, st) <= i32::MAX as i64);
    // SAFETY: every address is a view checked against its storage on this device; the kernel
    // reads the input and kernel planes the host-checked table names, inside their sizes, and
    // writes each output element once; the output shares no storage with the inputs (detached).
    unsafe { launch::<T>(dev, "convMap", p, narrow) }
}

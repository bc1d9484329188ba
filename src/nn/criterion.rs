//! Criterions: ClassNLL, SpatialClassNLL, BCE, MSE, Abs, SmoothL1, SoftMargin, Margin, MultiMargin, MultiLabelMargin, DistKLDiv, L1Cost.

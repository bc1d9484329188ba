//! The other convolutions: SpatialConvolutionLocal, SpatialConvolutionMap, SpatialFullConvolutionMap, SpatialSubSampling, TemporalConvolution, TemporalRowConvolution, TemporalSubSampling.

//! Pooling: max, dilated max, average, adaptive max/average, fractional max, unpooling (spatial, volumetric), TemporalMaxPooling, FeatureLPPooling.

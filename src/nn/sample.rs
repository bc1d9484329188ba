//! Padding (reflection, replication), upsampling (nearest, bilinear, trilinear) and the bilinear grid sampler.

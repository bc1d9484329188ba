//! Activations: Abs, ELU, GatedLinear, HardShrink, HardTanh, LeakyReLU, LogSigmoid, LogSoftMax, PReLU, RReLU, Sigmoid, SoftMax, SoftPlus, SoftShrink, Sqrt, Square, Tanh, Threshold.

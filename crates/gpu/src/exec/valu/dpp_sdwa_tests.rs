//! Tests of the DPP and SDWA operand paths of [`super`].

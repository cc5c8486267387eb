module @jit_f64_math attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf64>, %arg1: tensor<4x8xf64>) -> (tensor<4x8xf64> {jax.result_info = "result[0]"}, tensor<4x8xf64> {jax.result_info = "result[1]"}, tensor<4x8xf64> {jax.result_info = "result[2]"}, tensor<4x8xf64> {jax.result_info = "result[3]"}, tensor<4x8xf64> {jax.result_info = "result[4]"}, tensor<4x8xf64> {jax.result_info = "result[5]"}, tensor<4x8xf64> {jax.result_info = "result[6]"}, tensor<f64> {jax.result_info = "result[7]"}, tensor<4x4xf64> {jax.result_info = "result[8]"}, tensor<4x8xf64> {jax.result_info = "result[9]"}, tensor<4x8xf32> {jax.result_info = "result[10]"}, tensor<4x8xi64> {jax.result_info = "result[11]"}) {
    %0 = stablehlo.exponential %arg0 : tensor<4x8xf64>
    %1 = stablehlo.abs %arg1 : tensor<4x8xf64>
    %2 = stablehlo.log %1 : tensor<4x8xf64>
    %3 = stablehlo.sine %arg0 : tensor<4x8xf64>
    %4 = stablehlo.cosine %arg1 : tensor<4x8xf64>
    %5 = stablehlo.multiply %3, %4 : tensor<4x8xf64>
    %6 = stablehlo.divide %arg0, %arg1 : tensor<4x8xf64>
    %7 = stablehlo.abs %arg0 : tensor<4x8xf64>
    %8 = stablehlo.sqrt %7 : tensor<4x8xf64>
    %9 = stablehlo.tanh %arg0 : tensor<4x8xf64>
    %10 = chlo.erf %arg0 : tensor<4x8xf64> -> tensor<4x8xf64>
    %11 = stablehlo.multiply %arg0, %arg1 : tensor<4x8xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %12 = stablehlo.reduce(%11 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf64>, tensor<f64>) -> tensor<f64>
    %13 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<4x8xf64>) -> tensor<8x4xf64>
    %14 = stablehlo.dot_general %arg0, %13, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf64>, tensor<8x4xf64>) -> tensor<4x4xf64>
    %cst_0 = stablehlo.constant dense<1.000000e+10> : tensor<f64>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<4x8xf64>
    %16 = stablehlo.multiply %arg0, %15 : tensor<4x8xf64>
    %17 = stablehlo.floor %16 : tensor<4x8xf64>
    %18 = stablehlo.convert %arg0 : (tensor<4x8xf64>) -> tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+06> : tensor<f64>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f64>) -> tensor<4x8xf64>
    %20 = stablehlo.multiply %arg0, %19 : tensor<4x8xf64>
    %21 = stablehlo.convert %20 : (tensor<4x8xf64>) -> tensor<4x8xi64>
    return %0, %2, %5, %6, %8, %9, %10, %12, %14, %17, %18, %21 : tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<f64>, tensor<4x4xf64>, tensor<4x8xf64>, tensor<4x8xf32>, tensor<4x8xi64>
  }
}

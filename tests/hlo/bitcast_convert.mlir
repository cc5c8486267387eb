module @jit_bitcast_convert attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<8xi32>, %arg2: tensor<8xui32>) -> (tensor<16xi32> {jax.result_info = "result[0]"}, tensor<16xui32> {jax.result_info = "result[1]"}, tensor<8xf32> {jax.result_info = "result[2]"}, tensor<8xf32> {jax.result_info = "result[3]"}, tensor<16x4xui8> {jax.result_info = "result[4]"}, tensor<16x2xui16> {jax.result_info = "result[5]"}, tensor<16xf32> {jax.result_info = "result[6]"}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16xi32>
    %1 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16xui32>
    %2 = stablehlo.bitcast_convert %arg1 : (tensor<8xi32>) -> tensor<8xf32>
    %3 = stablehlo.bitcast_convert %arg2 : (tensor<8xui32>) -> tensor<8xf32>
    %4 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16x4xui8>
    %5 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16x2xui16>
    %6 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16xi32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %8 = stablehlo.xor %6, %7 : tensor<16xi32>
    %9 = stablehlo.bitcast_convert %8 : (tensor<16xi32>) -> tensor<16xf32>
    return %0, %1, %2, %3, %4, %5, %9 : tensor<16xi32>, tensor<16xui32>, tensor<8xf32>, tensor<8xf32>, tensor<16x4xui8>, tensor<16x2xui16>, tensor<16xf32>
  }
}

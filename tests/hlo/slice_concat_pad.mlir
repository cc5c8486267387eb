module @jit_slice_concat_pad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x6xf32>, %arg1: tensor<8x3xf32>) -> (tensor<3x2xf32> {jax.result_info = "result[0]"}, tensor<3x2xf32> {jax.result_info = "result[1]"}, tensor<8x9xf32> {jax.result_info = "result[2]"}, tensor<6x6xf32> {jax.result_info = "result[3]"}, tensor<3x8xf32> {jax.result_info = "result[4]"}, tensor<14x17xf32> {jax.result_info = "result[5]"}, tensor<8x6xf32> {jax.result_info = "result[6]"}, tensor<11x7xf32> {jax.result_info = "result[7]"}, tensor<12x7xf32> {jax.result_info = "result[8]"}, tensor<10x7xf32> {jax.result_info = "result[9]"}) {
    %0 = stablehlo.slice %arg0 [1:7:2, 0:6:3] : (tensor<8x6xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.slice %arg0 [5:8, 2:4] : (tensor<8x6xf32>) -> tensor<3x2xf32>
    %2 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x6xf32>, tensor<8x3xf32>) -> tensor<8x9xf32>
    %3 = stablehlo.slice %arg0 [0:2, 0:6] : (tensor<8x6xf32>) -> tensor<2x6xf32>
    %4 = stablehlo.slice %arg0 [5:8, 0:6] : (tensor<8x6xf32>) -> tensor<3x6xf32>
    %5 = stablehlo.slice %arg0 [3:4, 0:6] : (tensor<8x6xf32>) -> tensor<1x6xf32>
    %6 = stablehlo.concatenate %3, %4, %5, dim = 0 : (tensor<2x6xf32>, tensor<3x6xf32>, tensor<1x6xf32>) -> tensor<6x6xf32>
    %7 = stablehlo.slice %arg1 [0:3, 0:3] : (tensor<8x3xf32>) -> tensor<3x3xf32>
    %8 = stablehlo.slice %arg0 [0:3, 0:2] : (tensor<8x6xf32>) -> tensor<3x2xf32>
    %9 = stablehlo.slice %arg1 [3:6, 0:3] : (tensor<8x3xf32>) -> tensor<3x3xf32>
    %10 = stablehlo.concatenate %7, %8, %9, dim = 1 : (tensor<3x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>) -> tensor<3x8xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %11 = stablehlo.pad %arg0, %cst, low = [1, -1], high = [-2, 2], interior = [1, 2] : (tensor<8x6xf32>, tensor<f32>) -> tensor<14x17xf32>
    %cst_0 = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %12 = stablehlo.pad %arg1, %cst_0, low = [0, 2], high = [0, 1], interior = [0, 0] : (tensor<8x3xf32>, tensor<f32>) -> tensor<8x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %13 = call @_pad(%arg0, %c) : (tensor<8x6xf32>, tensor<i32>) -> tensor<11x7xf32>
    %14 = call @_pad_0(%arg1) : (tensor<8x3xf32>) -> tensor<12x7xf32>
    %15 = call @_pad_1(%arg1) : (tensor<8x3xf32>) -> tensor<10x7xf32>
    return %0, %1, %2, %6, %10, %11, %12, %13, %14, %15 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<8x9xf32>, tensor<6x6xf32>, tensor<3x8xf32>, tensor<14x17xf32>, tensor<8x6xf32>, tensor<11x7xf32>, tensor<12x7xf32>, tensor<10x7xf32>
  }
  func.func private @_pad(%arg0: tensor<8x6xf32>, %arg1: tensor<i32>) -> tensor<11x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [2, 1], interior = [0, 0] : (tensor<8x6xf32>, tensor<f32>) -> tensor<11x7xf32>
    return %1 : tensor<11x7xf32>
  }
  func.func private @_pad_0(%arg0: tensor<8x3xf32>) -> tensor<12x7xf32> {
    %0 = stablehlo.slice %arg0 [0:1, 0:3] : (tensor<8x3xf32>) -> tensor<1x3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 2] : (tensor<1x3xf32>) -> tensor<1x2x3xf32>
    %2 = stablehlo.reshape %1 : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
    %3 = stablehlo.slice %arg0 [7:8, 0:3] : (tensor<8x3xf32>) -> tensor<1x3xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 2] : (tensor<1x3xf32>) -> tensor<1x2x3xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
    %6 = stablehlo.concatenate %2, %arg0, %5, dim = 0 : (tensor<2x3xf32>, tensor<8x3xf32>, tensor<2x3xf32>) -> tensor<12x3xf32>
    %7 = stablehlo.slice %6 [0:12, 0:1] : (tensor<12x3xf32>) -> tensor<12x1xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<12x1xf32>) -> tensor<12x1x2xf32>
    %9 = stablehlo.reshape %8 : (tensor<12x1x2xf32>) -> tensor<12x2xf32>
    %10 = stablehlo.slice %6 [0:12, 2:3] : (tensor<12x3xf32>) -> tensor<12x1xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<12x1xf32>) -> tensor<12x1x2xf32>
    %12 = stablehlo.reshape %11 : (tensor<12x1x2xf32>) -> tensor<12x2xf32>
    %13 = stablehlo.concatenate %9, %6, %12, dim = 1 : (tensor<12x2xf32>, tensor<12x3xf32>, tensor<12x2xf32>) -> tensor<12x7xf32>
    return %13 : tensor<12x7xf32>
  }
  func.func private @_pad_1(%arg0: tensor<8x3xf32>) -> tensor<10x7xf32> {
    %0 = stablehlo.slice %arg0 [1:2, 0:3] : (tensor<8x3xf32>) -> tensor<1x3xf32>
    %1 = call @_flip(%0) : (tensor<1x3xf32>) -> tensor<1x3xf32>
    %2 = stablehlo.concatenate %1, %arg0, dim = 0 : (tensor<1x3xf32>, tensor<8x3xf32>) -> tensor<9x3xf32>
    %3 = stablehlo.slice %2 [7:8, 0:3] : (tensor<9x3xf32>) -> tensor<1x3xf32>
    %4 = call @_flip(%3) : (tensor<1x3xf32>) -> tensor<1x3xf32>
    %5 = stablehlo.concatenate %2, %4, dim = 0 : (tensor<9x3xf32>, tensor<1x3xf32>) -> tensor<10x3xf32>
    %6 = stablehlo.slice %5 [0:10, 1:3] : (tensor<10x3xf32>) -> tensor<10x2xf32>
    %7 = call @_flip_2(%6) : (tensor<10x2xf32>) -> tensor<10x2xf32>
    %8 = stablehlo.concatenate %7, %5, dim = 1 : (tensor<10x2xf32>, tensor<10x3xf32>) -> tensor<10x5xf32>
    %9 = stablehlo.slice %8 [0:10, 2:4] : (tensor<10x5xf32>) -> tensor<10x2xf32>
    %10 = call @_flip_2(%9) : (tensor<10x2xf32>) -> tensor<10x2xf32>
    %11 = stablehlo.concatenate %8, %10, dim = 1 : (tensor<10x5xf32>, tensor<10x2xf32>) -> tensor<10x7xf32>
    return %11 : tensor<10x7xf32>
  }
  func.func private @_flip(%arg0: tensor<1x3xf32>) -> tensor<1x3xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<1x3xf32>
    return %0 : tensor<1x3xf32>
  }
  func.func private @_flip_2(%arg0: tensor<10x2xf32>) -> tensor<10x2xf32> {
    %0 = stablehlo.reverse %arg0, dims = [1] : tensor<10x2xf32>
    return %0 : tensor<10x2xf32>
  }
}

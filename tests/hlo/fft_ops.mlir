module @jit_fft_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x10xcomplex<f32>>, %arg1: tensor<3x12xf32>, %arg2: tensor<3x7xcomplex<f32>>) -> (tensor<3x10xcomplex<f32>> {jax.result_info = "result[0]"}, tensor<3x10xcomplex<f32>> {jax.result_info = "result[1]"}, tensor<3x7xcomplex<f32>> {jax.result_info = "result[2]"}, tensor<3x12xf32> {jax.result_info = "result[3]"}, tensor<3x10xcomplex<f32>> {jax.result_info = "result[4]"}, tensor<3x7xcomplex<f32>> {jax.result_info = "result[5]"}, tensor<3x10xcomplex<f32>> {jax.result_info = "result[6]"}, tensor<3x12xf32> {jax.result_info = "result[7]"}, tensor<3x7xcomplex<f32>> {jax.result_info = "result[8]"}) {
    %cst = stablehlo.constant dense<[(3.000000e+00,0.000000e+00), (1.000000e+01,0.000000e+00)]> : tensor<2xcomplex<f32>>
    %0 = call @fft(%arg0) : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    %1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<3x10xcomplex<f32>>) -> tensor<10x3xcomplex<f32>>
    %2 = call @fft_0(%1) : (tensor<10x3xcomplex<f32>>) -> tensor<10x3xcomplex<f32>>
    %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<10x3xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    %4 = call @fft_1(%arg1) : (tensor<3x12xf32>) -> tensor<3x7xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = call @_pad(%arg2, %c) : (tensor<3x7xcomplex<f32>>, tensor<i32>) -> tensor<3x7xcomplex<f32>>
    %6 = call @fft_2(%5) : (tensor<3x7xcomplex<f32>>) -> tensor<3x12xf32>
    %7 = call @fft_3(%arg0) : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    %8 = call @fft_4(%arg1) : (tensor<3x12xf32>) -> tensor<3x7xcomplex<f32>>
    %9 = call @fft_5(%arg0) : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %10 = stablehlo.reduce(%cst init: %cst_0) applies stablehlo.multiply across dimensions = [0] : (tensor<2xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
    %11 = stablehlo.sqrt %10 : tensor<complex<f32>>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<complex<f32>>) -> tensor<3x10xcomplex<f32>>
    %13 = stablehlo.multiply %9, %12 : tensor<3x10xcomplex<f32>>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %14 = call @_pad(%arg2, %c_1) : (tensor<3x7xcomplex<f32>>, tensor<i32>) -> tensor<3x7xcomplex<f32>>
    %15 = call @fft_6(%14) : (tensor<3x7xcomplex<f32>>) -> tensor<3x12xf32>
    %16 = stablehlo.slice %arg1 [0:3, 0:7] : (tensor<3x12xf32>) -> tensor<3x7xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %17 = call @_pad_7(%16, %c_2) : (tensor<3x7xf32>, tensor<i32>) -> tensor<3x7xf32>
    %18 = call @fft_8(%17) : (tensor<3x7xf32>) -> tensor<3x7xcomplex<f32>>
    return %0, %3, %4, %6, %7, %8, %13, %15, %18 : tensor<3x10xcomplex<f32>>, tensor<3x10xcomplex<f32>>, tensor<3x7xcomplex<f32>>, tensor<3x12xf32>, tensor<3x10xcomplex<f32>>, tensor<3x7xcomplex<f32>>, tensor<3x10xcomplex<f32>>, tensor<3x12xf32>, tensor<3x7xcomplex<f32>>
  }
  func.func private @fft(%arg0: tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = FFT, length = [10] : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    return %0 : tensor<3x10xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<10x3xcomplex<f32>>) -> tensor<10x3xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = IFFT, length = [3] : (tensor<10x3xcomplex<f32>>) -> tensor<10x3xcomplex<f32>>
    return %0 : tensor<10x3xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<3x12xf32>) -> tensor<3x7xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [12] : (tensor<3x12xf32>) -> tensor<3x7xcomplex<f32>>
    return %0 : tensor<3x7xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<3x7xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<3x7xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x7xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3x7xcomplex<f32>>
    return %1 : tensor<3x7xcomplex<f32>>
  }
  func.func private @fft_2(%arg0: tensor<3x7xcomplex<f32>>) -> tensor<3x12xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [12] : (tensor<3x7xcomplex<f32>>) -> tensor<3x12xf32>
    return %0 : tensor<3x12xf32>
  }
  func.func private @fft_3(%arg0: tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = FFT, length = [3, 10] : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    return %0 : tensor<3x10xcomplex<f32>>
  }
  func.func private @fft_4(%arg0: tensor<3x12xf32>) -> tensor<3x7xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [3, 12] : (tensor<3x12xf32>) -> tensor<3x7xcomplex<f32>>
    return %0 : tensor<3x7xcomplex<f32>>
  }
  func.func private @fft_5(%arg0: tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = IFFT, length = [3, 10] : (tensor<3x10xcomplex<f32>>) -> tensor<3x10xcomplex<f32>>
    return %0 : tensor<3x10xcomplex<f32>>
  }
  func.func private @fft_6(%arg0: tensor<3x7xcomplex<f32>>) -> tensor<3x12xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [3, 12] : (tensor<3x7xcomplex<f32>>) -> tensor<3x12xf32>
    return %0 : tensor<3x12xf32>
  }
  func.func private @_pad_7(%arg0: tensor<3x7xf32>, %arg1: tensor<i32>) -> tensor<3x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x7xf32>, tensor<f32>) -> tensor<3x7xf32>
    return %1 : tensor<3x7xf32>
  }
  func.func private @fft_8(%arg0: tensor<3x7xf32>) -> tensor<3x7xcomplex<f32>> {
    %0 = stablehlo.convert %arg0 : (tensor<3x7xf32>) -> tensor<3x7xcomplex<f32>>
    %1 = stablehlo.fft %0, type = FFT, length = [7] : (tensor<3x7xcomplex<f32>>) -> tensor<3x7xcomplex<f32>>
    return %1 : tensor<3x7xcomplex<f32>>
  }
}

module @jit_cnn_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3x2x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<36x3xf32>, %arg3: tensor<2x6x6x2xf32>, %arg4: tensor<2xi32>) -> (tensor<3x3x2x4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<36x3xf32> {jax.result_info = "result[2]"}, tensor<f32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convolution(%arg3, %arg0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x6x6x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<2x6x6x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x6x6x4xf32>
    %4 = call @relu(%3) : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %6 = stablehlo.compare GT, %3, %5, FLOAT : (tensor<2x6x6x4xf32>, tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%4, %7) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %46 = stablehlo.maximum %arg5, %arg6 : tensor<f32>
      stablehlo.return %46 : tensor<f32>
    }) : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x3x3x4xf32>
    %9 = stablehlo.reshape %8 : (tensor<2x3x3x4xf32>) -> tensor<2x36xf32>
    %10 = stablehlo.dot_general %9, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x36xf32>, tensor<36x3xf32>) -> tensor<2x3xf32>
    %11:3 = call @log_softmax(%10) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
    %12 = call @_one_hot(%arg4) : (tensor<2xi32>) -> tensor<2x3xf32>
    %13 = stablehlo.multiply %11#0, %12 : tensor<2x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.reduce(%13 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%14 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %16 = stablehlo.divide %15, %cst_3 : tensor<f32>
    %17 = stablehlo.negate %16 : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %18 = stablehlo.negate %cst_4 : tensor<f32>
    %cst_5 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %19 = stablehlo.divide %18, %cst_5 : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
    %22 = stablehlo.multiply %21, %12 : tensor<2x3xf32>
    %23 = call @log_softmax_0(%11#1, %11#2, %22) : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %24 = stablehlo.dot_general %23, %9, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<2x36xf32>) -> tensor<3x36xf32>
    %25 = stablehlo.transpose %24, dims = [1, 0] : (tensor<3x36xf32>) -> tensor<36x3xf32>
    %26 = stablehlo.dot_general %23, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<36x3xf32>) -> tensor<2x36xf32>
    %27 = stablehlo.reshape %26 : (tensor<2x36xf32>) -> tensor<2x3x3x4xf32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %28 = stablehlo.pad %4, %cst_6, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x6x6x4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = "stablehlo.select_and_scatter"(%28, %27, %cst_7) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %46 = stablehlo.compare GE, %arg5, %arg6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %46 : tensor<i1>
    }, {
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %46 = stablehlo.add %arg5, %arg6 : tensor<f32>
      stablehlo.return %46 : tensor<f32>
    }) : (tensor<2x6x6x4xf32>, tensor<2x3x3x4xf32>, tensor<f32>) -> tensor<2x6x6x4xf32>
    %30 = stablehlo.slice %29 [0:2, 0:6, 0:6, 0:4] : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %32 = stablehlo.select %6, %30, %31 : tensor<2x6x6x4xi1>, tensor<2x6x6x4xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.reduce(%32 init: %cst_9) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<4xf32>
    %34 = stablehlo.reshape %33 : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.reduce(%34 init: %cst_10) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %36 = stablehlo.convolution(%arg3, %32) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x2x4xf32>
    %cst_11 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %38 = stablehlo.multiply %37, %36 : tensor<3x3x2x4xf32>
    %39 = stablehlo.subtract %arg0, %38 : tensor<3x3x2x4xf32>
    %cst_12 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %41 = stablehlo.multiply %40, %35 : tensor<4xf32>
    %42 = stablehlo.subtract %arg1, %41 : tensor<4xf32>
    %cst_13 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %44 = stablehlo.multiply %43, %25 : tensor<36x3xf32>
    %45 = stablehlo.subtract %arg2, %44 : tensor<36x3xf32>
    return %39, %42, %45, %17 : tensor<3x3x2x4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x6x6x4xf32>
    return %1 : tensor<2x6x6x4xf32>
  }
  func.func private @log_softmax(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<2xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xf32>) -> tensor<2x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<2x3xf32>
    %6 = stablehlo.exponential %5 : tensor<2x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<2xf32>) -> tensor<2x1xf32>
    %9 = stablehlo.log %8 : tensor<2x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<2x3xf32>
    return %11, %6, %8 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>
  }
  func.func private @_one_hot(%arg0: tensor<2xi32>) -> tensor<2x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x3xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x1xi32>) -> tensor<2x3xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x3xi32>) -> tensor<2x3xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
    %5 = stablehlo.convert %4 : (tensor<2x3xi1>) -> tensor<2x3xf32>
    return %5 : tensor<2x3xf32>
  }
  func.func private @log_softmax_0(%arg0: tensor<2x3xf32>, %arg1: tensor<2x1xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.negate %arg2 : tensor<2x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %2 = stablehlo.reshape %1 : (tensor<2xf32>) -> tensor<2x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<2x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<2x3xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<2x3xf32>
    return %7 : tensor<2x3xf32>
  }
}

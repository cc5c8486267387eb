module @jit_mlp_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32x4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<8x16xf32>, %arg5: tensor<8x4xf32>) -> (tensor<16x32xf32> {jax.result_info = "result[0]"}, tensor<32xf32> {jax.result_info = "result[1]"}, tensor<32x4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<f32> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.dot_general %arg4, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<32xf32>) -> tensor<1x32xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<8x32xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x32xf32>
    %4 = call @relu(%3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %6 = stablehlo.compare GT, %3, %5, FLOAT : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xi1>
    %7 = stablehlo.dot_general %4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
    %8 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<8x4xf32>
    %10 = stablehlo.add %7, %9 : tensor<8x4xf32>
    %11 = stablehlo.tanh %10 : tensor<8x4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
    %13 = stablehlo.subtract %12, %11 : tensor<8x4xf32>
    %14 = stablehlo.subtract %11, %arg5 : tensor<8x4xf32>
    %15 = stablehlo.multiply %14, %14 : tensor<8x4xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
    %17 = stablehlo.multiply %16, %14 : tensor<8x4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%15 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %19 = stablehlo.divide %18, %cst_3 : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_5 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %20 = stablehlo.divide %cst_4, %cst_5 : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
    %22 = stablehlo.multiply %21, %17 : tensor<8x4xf32>
    %23 = stablehlo.multiply %22, %13 : tensor<8x4xf32>
    %24 = stablehlo.multiply %23, %11 : tensor<8x4xf32>
    %25 = stablehlo.add %23, %24 : tensor<8x4xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.reduce(%25 init: %cst_6) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    %27 = stablehlo.reshape %26 : (tensor<4xf32>) -> tensor<1x4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%27 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %29 = stablehlo.dot_general %25, %4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
    %30 = stablehlo.transpose %29, dims = [1, 0] : (tensor<4x32xf32>) -> tensor<32x4xf32>
    %31 = stablehlo.dot_general %25, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<32x4xf32>) -> tensor<8x32xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %33 = stablehlo.select %6, %31, %32 : tensor<8x32xi1>, tensor<8x32xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.reduce(%33 init: %cst_9) applies stablehlo.add across dimensions = [0] : (tensor<8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %35 = stablehlo.reshape %34 : (tensor<32xf32>) -> tensor<1x32xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_10) applies stablehlo.add across dimensions = [0] : (tensor<1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %37 = stablehlo.dot_general %33, %arg4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>
    %38 = stablehlo.transpose %37, dims = [1, 0] : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %cst_11 = stablehlo.constant dense<5.000000e-02> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %40 = stablehlo.multiply %39, %38 : tensor<16x32xf32>
    %41 = stablehlo.subtract %arg0, %40 : tensor<16x32xf32>
    %cst_12 = stablehlo.constant dense<5.000000e-02> : tensor<f32>
    %42 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %43 = stablehlo.multiply %42, %36 : tensor<32xf32>
    %44 = stablehlo.subtract %arg1, %43 : tensor<32xf32>
    %cst_13 = stablehlo.constant dense<5.000000e-02> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<32x4xf32>
    %46 = stablehlo.multiply %45, %30 : tensor<32x4xf32>
    %47 = stablehlo.subtract %arg2, %46 : tensor<32x4xf32>
    %cst_14 = stablehlo.constant dense<5.000000e-02> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %49 = stablehlo.multiply %48, %28 : tensor<4xf32>
    %50 = stablehlo.subtract %arg3, %49 : tensor<4xf32>
    return %41, %44, %47, %50, %19 : tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<8x32xf32>) -> tensor<8x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x32xf32>
    return %1 : tensor<8x32xf32>
  }
}

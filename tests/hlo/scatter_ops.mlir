module @jit_scatter_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x3xf32>, %arg1: tensor<5xi32>, %arg2: tensor<5x3xf32>, %arg3: tensor<6x3xi32>, %arg4: tensor<5xi32>) -> (tensor<6x3xf32> {jax.result_info = "result[0]"}, tensor<6x3xf32> {jax.result_info = "result[1]"}, tensor<6x3xf32> {jax.result_info = "result[2]"}, tensor<6x3xf32> {jax.result_info = "result[3]"}, tensor<6x3xf32> {jax.result_info = "result[4]"}, tensor<6x3xf32> {jax.result_info = "result[5]"}, tensor<6x3xf32> {jax.result_info = "result[6]"}, tensor<6x3xi32> {jax.result_info = "result[7]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.compare LT, %arg4, %0, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_0 = stablehlo.constant dense<6> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.add %arg4, %2 : tensor<5xi32>
    %4 = stablehlo.select %1, %3, %arg4 : tensor<5xi1>, tensor<5xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %6 = "stablehlo.scatter"(%arg0, %5, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %69 = stablehlo.add %arg5, %arg6 : tensor<f32>
      stablehlo.return %69 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %8 = stablehlo.compare LT, %arg1, %7, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_2 = stablehlo.constant dense<6> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %10 = stablehlo.add %arg1, %9 : tensor<5xi32>
    %11 = stablehlo.select %8, %10, %arg1 : tensor<5xi1>, tensor<5xi32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %13 = "stablehlo.scatter"(%arg0, %12, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      stablehlo.return %arg6 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %15 = stablehlo.compare LT, %arg4, %14, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_4 = stablehlo.constant dense<6> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %17 = stablehlo.add %arg4, %16 : tensor<5xi32>
    %18 = stablehlo.select %15, %17, %arg4 : tensor<5xi1>, tensor<5xi32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %20 = "stablehlo.scatter"(%arg0, %19, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %69 = stablehlo.maximum %arg5, %arg6 : tensor<f32>
      stablehlo.return %69 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %21 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %22 = stablehlo.compare LT, %arg4, %21, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_6 = stablehlo.constant dense<6> : tensor<i32>
    %23 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %24 = stablehlo.add %arg4, %23 : tensor<5xi32>
    %25 = stablehlo.select %22, %24, %arg4 : tensor<5xi1>, tensor<5xi32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %27 = "stablehlo.scatter"(%arg0, %26, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %69 = stablehlo.minimum %arg5, %arg6 : tensor<f32>
      stablehlo.return %69 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %28 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %29 = stablehlo.compare LT, %arg4, %28, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_8 = stablehlo.constant dense<6> : tensor<i32>
    %30 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %31 = stablehlo.add %arg4, %30 : tensor<5xi32>
    %32 = stablehlo.select %29, %31, %arg4 : tensor<5xi1>, tensor<5xi32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %34 = "stablehlo.scatter"(%arg0, %33, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %69 = stablehlo.multiply %arg5, %arg6 : tensor<f32>
      stablehlo.return %69 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
    %c_9 = stablehlo.constant dense<1> : tensor<i32>
    %35 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %37 = "stablehlo.scatter"(%arg0, %35, %36) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %69 = stablehlo.add %arg5, %arg6 : tensor<f32>
      stablehlo.return %69 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<1xi32>, tensor<6xf32>) -> tensor<6x3xf32>
    %38 = stablehlo.slice %arg1 [0:2] : (tensor<5xi32>) -> tensor<2xi32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %39 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %40 = stablehlo.compare LT, %38, %39, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %c_11 = stablehlo.constant dense<3> : tensor<i32>
    %41 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %42 = stablehlo.add %38, %41 : tensor<2xi32>
    %43 = stablehlo.select %40, %42, %38 : tensor<2xi1>, tensor<2xi32>
    %c_12 = stablehlo.constant dense<1> : tensor<i32>
    %44 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<2x1xi32>
    %45 = stablehlo.broadcast_in_dim %43, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %46 = stablehlo.concatenate %44, %45, dim = 1 : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %48 = "stablehlo.scatter"(%arg0, %46, %47) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      stablehlo.return %arg6 : tensor<f32>
    }) : (tensor<6x3xf32>, tensor<2x2xi32>, tensor<2x2xf32>) -> tensor<6x3xf32>
    %49 = stablehlo.broadcast_in_dim %arg4, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %50 = stablehlo.iota dim = 0 : tensor<3xi32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [1] : (tensor<3xi32>) -> tensor<1x3xi32>
    %c_14 = stablehlo.constant dense<0> : tensor<i32>
    %52 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<i32>) -> tensor<5x1xi32>
    %53 = stablehlo.compare LT, %49, %52, SIGNED : (tensor<5x1xi32>, tensor<5x1xi32>) -> tensor<5x1xi1>
    %c_15 = stablehlo.constant dense<6> : tensor<i32>
    %54 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<i32>) -> tensor<5x1xi32>
    %55 = stablehlo.add %49, %54 : tensor<5x1xi32>
    %56 = stablehlo.select %53, %55, %49 : tensor<5x1xi1>, tensor<5x1xi32>
    %c_16 = stablehlo.constant dense<0> : tensor<i32>
    %57 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i32>) -> tensor<1x3xi32>
    %58 = stablehlo.compare LT, %51, %57, SIGNED : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi1>
    %c_17 = stablehlo.constant dense<3> : tensor<i32>
    %59 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<i32>) -> tensor<1x3xi32>
    %60 = stablehlo.add %51, %59 : tensor<1x3xi32>
    %61 = stablehlo.select %58, %60, %51 : tensor<1x3xi1>, tensor<1x3xi32>
    %62 = stablehlo.broadcast_in_dim %56, dims = [0, 1] : (tensor<5x1xi32>) -> tensor<5x3xi32>
    %63 = stablehlo.broadcast_in_dim %61, dims = [0, 1] : (tensor<1x3xi32>) -> tensor<5x3xi32>
    %64 = stablehlo.broadcast_in_dim %62, dims = [0, 1] : (tensor<5x3xi32>) -> tensor<5x3x1xi32>
    %65 = stablehlo.broadcast_in_dim %63, dims = [0, 1] : (tensor<5x3xi32>) -> tensor<5x3x1xi32>
    %66 = stablehlo.concatenate %64, %65, dim = 2 : (tensor<5x3x1xi32>, tensor<5x3x1xi32>) -> tensor<5x3x2xi32>
    %c_18 = stablehlo.constant dense<7> : tensor<i32>
    %67 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<i32>) -> tensor<5x3xi32>
    %68 = "stablehlo.scatter"(%arg3, %66, %67) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<i32>):
      %69 = stablehlo.add %arg5, %arg6 : tensor<i32>
      stablehlo.return %69 : tensor<i32>
    }) : (tensor<6x3xi32>, tensor<5x3x2xi32>, tensor<5x3xi32>) -> tensor<6x3xi32>
    return %6, %13, %20, %27, %34, %37, %48, %68 : tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xi32>
  }
}

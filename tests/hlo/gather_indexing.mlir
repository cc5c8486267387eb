module @jit_gather_indexing attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10x4xf32>, %arg1: tensor<6xi32>, %arg2: tensor<3x2xi32>, %arg3: tensor<5xi32>, %arg4: tensor<5xi32>, %arg5: tensor<10x2xi32>) -> (tensor<6x4xf32> {jax.result_info = "result[0]"}, tensor<6xf32> {jax.result_info = "result[1]"}, tensor<3x2x4xf32> {jax.result_info = "result[2]"}, tensor<10x2xf32> {jax.result_info = "result[3]"}, tensor<10x5xf32> {jax.result_info = "result[4]"}, tensor<5xf32> {jax.result_info = "result[5]"}, tensor<6x4xf32> {jax.result_info = "result[6]"}, tensor<5x4xf32> {jax.result_info = "result[7]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %c_0 = stablehlo.constant dense<10> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<6xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<6xi1>, tensor<6xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<10x4xf32>, tensor<6x1xi32>) -> tensor<6x4xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %8 = stablehlo.compare LT, %arg1, %7, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %c_2 = stablehlo.constant dense<10> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %10 = stablehlo.add %arg1, %9 : tensor<6xi32>
    %11 = stablehlo.select %8, %10, %arg1 : tensor<6xi1>, tensor<6xi32>
    %c_3 = stablehlo.constant dense<2> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %13 = stablehlo.convert %12 : tensor<6xi32>
    %14 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %15 = stablehlo.broadcast_in_dim %13, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %16 = stablehlo.concatenate %14, %15, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>
    %17 = "stablehlo.gather"(%arg0, %16) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<10x4xf32>, tensor<6x2xi32>) -> tensor<6xf32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %18 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<3x2xi32>
    %19 = stablehlo.compare LT, %arg2, %18, SIGNED : (tensor<3x2xi32>, tensor<3x2xi32>) -> tensor<3x2xi1>
    %c_5 = stablehlo.constant dense<10> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<3x2xi32>
    %21 = stablehlo.add %arg2, %20 : tensor<3x2xi32>
    %22 = stablehlo.select %19, %21, %arg2 : tensor<3x2xi1>, tensor<3x2xi32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<3x2xi32>) -> tensor<3x2x1xi32>
    %24 = "stablehlo.gather"(%arg0, %23) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<10x4xf32>, tensor<3x2x1xi32>) -> tensor<3x2x4xf32>
    %25 = call @take_along_axis(%arg0, %arg5) : (tensor<10x4xf32>, tensor<10x2xi32>) -> tensor<10x2xf32>
    %26 = call @_take(%arg0, %arg4) : (tensor<10x4xf32>, tensor<5xi32>) -> tensor<10x5xf32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %28 = stablehlo.compare LT, %arg3, %27, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_7 = stablehlo.constant dense<10> : tensor<i32>
    %29 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %30 = stablehlo.add %arg3, %29 : tensor<5xi32>
    %31 = stablehlo.select %28, %30, %arg3 : tensor<5xi1>, tensor<5xi32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %32 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %33 = stablehlo.compare LT, %arg4, %32, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_9 = stablehlo.constant dense<4> : tensor<i32>
    %34 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %35 = stablehlo.add %arg4, %34 : tensor<5xi32>
    %36 = stablehlo.select %33, %35, %arg4 : tensor<5xi1>, tensor<5xi32>
    %37 = stablehlo.broadcast_in_dim %31, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %38 = stablehlo.broadcast_in_dim %36, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %39 = stablehlo.concatenate %37, %38, dim = 1 : (tensor<5x1xi32>, tensor<5x1xi32>) -> tensor<5x2xi32>
    %40 = "stablehlo.gather"(%arg0, %39) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<10x4xf32>, tensor<5x2xi32>) -> tensor<5xf32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %41 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %42 = stablehlo.compare LT, %arg1, %41, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %c_11 = stablehlo.constant dense<10> : tensor<i32>
    %43 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %44 = stablehlo.add %arg1, %43 : tensor<6xi32>
    %45 = stablehlo.select %42, %44, %arg1 : tensor<6xi1>, tensor<6xi32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %c_12 = stablehlo.constant dense<9> : tensor<1xi32>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %47 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<i32>) -> tensor<6x1xi32>
    %48 = stablehlo.compare GE, %46, %47, SIGNED : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x1xi1>
    %49 = stablehlo.broadcast_in_dim %c_12, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<6x1xi32>
    %51 = stablehlo.compare LE, %46, %50, SIGNED : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x1xi1>
    %52 = stablehlo.and %48, %51 : tensor<6x1xi1>
    %c_14 = stablehlo.constant dense<true> : tensor<i1>
    %53 = stablehlo.reduce(%52 init: %c_14) applies stablehlo.and across dimensions = [1] : (tensor<6x1xi1>, tensor<i1>) -> tensor<6xi1>
    %54 = "stablehlo.gather"(%arg0, %46) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<10x4xf32>, tensor<6x1xi32>) -> tensor<6x4xf32>
    %55 = stablehlo.broadcast_in_dim %53, dims = [0] : (tensor<6xi1>) -> tensor<6x4xi1>
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
    %57 = stablehlo.select %55, %54, %56 : tensor<6x4xi1>, tensor<6x4xf32>
    %c_15 = stablehlo.constant dense<0> : tensor<i32>
    %58 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %59 = stablehlo.compare LT, %arg3, %58, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_16 = stablehlo.constant dense<10> : tensor<i32>
    %60 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %61 = stablehlo.add %arg3, %60 : tensor<5xi32>
    %62 = stablehlo.select %59, %61, %arg3 : tensor<5xi1>, tensor<5xi32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %64 = "stablehlo.gather"(%arg0, %63) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<10x4xf32>, tensor<5x1xi32>) -> tensor<5x4xf32>
    return %6, %17, %24, %25, %26, %40, %57, %64 : tensor<6x4xf32>, tensor<6xf32>, tensor<3x2x4xf32>, tensor<10x2xf32>, tensor<10x5xf32>, tensor<5xf32>, tensor<6x4xf32>, tensor<5x4xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<10x4xf32>, %arg1: tensor<10x2xi32>) -> tensor<10x2xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<10x2xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<10x2xi32>, tensor<10x2xi32>) -> tensor<10x2xi1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<10x2xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<10x2xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<10x2xi1>, tensor<10x2xi32>
    %5 = stablehlo.reshape %4 : (tensor<10x2xi32>) -> tensor<10x2x1xi32>
    %c_1 = stablehlo.constant dense<3> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<10x2x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<10x2x1xi32>, tensor<10x2x1xi32>) -> tensor<10x2x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<10x2x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<10x2x1xi32>, tensor<10x2x1xi32>) -> tensor<10x2x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<10x2x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<10x2x1xi1>, tensor<i1>) -> tensor<10x2xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<10x4xf32>, tensor<10x2x1xi32>) -> tensor<10x2xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10x2xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<10x2xi1>, tensor<10x2xf32>
    return %15 : tensor<10x2xf32>
  }
  func.func private @_take(%arg0: tensor<10x4xf32>, %arg1: tensor<5xi32>) -> tensor<10x5xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %1 = "stablehlo.gather"(%arg0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 10, 1>}> : (tensor<10x4xf32>, tensor<5x1xi32>) -> tensor<10x5xf32>
    return %1 : tensor<10x5xf32>
  }
}

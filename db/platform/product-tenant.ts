/** The organization and product a product-authenticated call acts for. */
export interface ProductTenant {
  organizationId: string;
  productId: string;
}
